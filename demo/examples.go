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
			// A time series needs GROUP BY date_trunc('month', checkin_time)
			// (21 months from the column's bounds); until then, one window:
			// about 4,000 check-ins against noise of scale 20/ε.
			Title: "Check-ins in the first quarter of 2010 (a date range on the timestamp column checkin_time)",
			SQL:   "SELECT COUNT(*) FROM checkins WHERE checkin_time >= DATE '2010-01-01' AND checkin_time < DATE '2010-04-01';",
		},
		{
			Title: "The same question under dependent DP: friends' check-ins depend on yours, so more noise (compare EXPLAIN of both)",
			SQL:   "SELECT venue_category, COUNT(*) FROM checkins_ddp WHERE checkin_time >= '2010-01-01' GROUP BY venue_category;",
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
