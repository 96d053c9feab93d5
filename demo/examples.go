package demo

// Example is a query to show a newcomer.
type Example struct {
	Title string
	SQL   string
	// Refused is true for an example that shows what the proxy refuses;
	// Title says why.
	Refused bool
}

// Examples returns example queries to print for a newcomer, simplest
// first. The first works as typed in psql. Every example but the refused
// one is answered with noise and spends the user's default ε.
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
			Title: "The same question under dependent DP: friends' check-ins depend on yours, so more noise (compare EXPLAIN of both)",
			SQL:   "SELECT venue_category, COUNT(*) FROM checkins_ddp WHERE checkin_time >= '2010-01-01' GROUP BY venue_category;",
		},
		{
			Title:   "Refused: reading rows of a private table (only aggregates are answered; SQLSTATE 42501)",
			SQL:     "SELECT * FROM people;",
			Refused: true,
		},
	}
}
