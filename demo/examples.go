package demo

// Example is a query to show a newcomer.
type Example struct {
	Title string
	SQL   string
	// Refused is true for an example that shows what the proxy refuses;
	// Title says why.
	Refused bool
	// Free is true for an example answered exactly at no cost (the answer
	// is already published).
	Free bool
}

// ExampleEpsilon is the ε the examples are meant to be run with: the demo
// user's max_epsilon (its default_epsilon 0.1 leaves room to explore, but
// makes the examples' noise ten times wider). The printed instructions
// set it first (SET ddp.epsilon = 1); each example then spends 1 of its
// dataset's 10, and every one shows an answer the noise does not swamp
// (TestExamplesInformative: 95% of the noise within a quarter of the
// median true value it reports).
const ExampleEpsilon = 1.0

// Examples returns example queries to print for a newcomer, simplest
// first. The first works as typed in psql. Every example but the refused
// and the free one is answered with noise and spends the session's ε.
func Examples() []Example {
	return []Example{
		{
			Title: "How many people of each sex? (a noisy histogram over the census sample)",
			SQL:   "SELECT sex, COUNT(*) FROM people GROUP BY sex;",
		},
		{
			Title: "Average weekly working hours by income class, for people aged 25 to 65",
			SQL:   "SELECT income, COUNT(*), AVG(hours_per_week) FROM people WHERE age BETWEEN 25 AND 65 GROUP BY income;",
		},
		{
			Title: "Check-ins per borough (private check-ins joined to the public cells map)",
			SQL:   "SELECT c.borough, COUNT(*) FROM checkins k JOIN cells c ON k.cell = c.cell GROUP BY c.borough ORDER BY 2 DESC;",
		},
		{
			Title: "Check-ins per venue category in 2010",
			SQL:   "SELECT venue_category, COUNT(*) FROM checkins WHERE checkin_time >= '2010-01-01' GROUP BY venue_category;",
		},
		{
			// One window: about 4,000 check-ins against noise of scale 20/ε.
			Title: "Check-ins in the first quarter of 2010 (a date range on the timestamp column checkin_time)",
			SQL:   "SELECT COUNT(*) FROM checkins WHERE checkin_time >= DATE '2010-01-01' AND checkin_time < DATE '2010-04-01';",
		},
		{
			// The 21 months of the column's bounds are the key set (derived
			// from the declared bounds, no δ); each user's 20 counted
			// check-ins spread over them, so the histogram's sensitivity
			// stays 20: ±60 at ε = 1 on monthly counts of a thousand or more.
			Title: "Check-ins per month, a time series (GROUP BY date_trunc over the timestamp column: its 21 months come from the declared bounds)",
			SQL:   "SELECT date_trunc('month', checkin_time) AS month, COUNT(*) FROM checkins GROUP BY 1 ORDER BY 1;",
		},
		{
			// Dependent DP multiplies the noise by the dependence among
			// friends (about 29 times plain DP's 20/ε here, twice that per
			// group of a histogram): per venue category (±34,000 at ε 0.1,
			// ±3,400 at ε 1) it would swamp counts of about a thousand, so
			// the example asks for the total, where ±1,700 at ε 1 is about
			// a tenth of the 16,600 check-ins counted (20 per user).
			Title: "All check-ins under dependent DP: friends' check-ins depend on yours, so about 29 times the noise of plain DP (compare EXPLAIN SELECT COUNT(*) FROM checkins)",
			SQL:   "SELECT COUNT(*) FROM checkins_ddp;",
		},
		{
			Title: "Published census totals (model induced): sex counts were published exactly, so they are answered exactly and free",
			SQL:   "SELECT sex, COUNT(*) FROM census_published GROUP BY sex;",
			Free:  true,
		},
		{
			Title: "The unpublished sex x race table: noise covers every change that keeps the published totals (sensitivity 4, not 1)",
			SQL:   "SELECT sex, race, COUNT(*) FROM census_published GROUP BY sex, race;",
		},
		{
			Title: "Salaries under Blowfish distance secrets: the first range count releases a synopsis, later ranges at the same ε are free",
			SQL:   "SELECT COUNT(*) FROM salaries WHERE salary BETWEEN 40000 AND 60000;",
		},
		{
			Title:   "Refused: reading rows of a private table (only aggregates are answered; SQLSTATE 42501)",
			SQL:     "SELECT * FROM people;",
			Refused: true,
		},
	}
}
