package pgledger

import "fmt"

// statements are the ledger's SQL, with the schema spliced in once.
type statements struct {
	reserve, ensureAccount, account string
	commit, publish, readRelease    string // publish: import only
	refund, lookup                  string
	accounts, pending               string
	audit                           string
}

func newStatements(s string) statements {
	f := func(q string) string { return fmt.Sprintf(q, s) }
	return statements{
		// The reservation: one statement, so one transaction and one
		// commit. The UPDATE charges only if the new totals stay within
		// the limits; the pending row is inserted only if it charged.
		reserve: f(`WITH charged AS (
	UPDATE %[1]s.budgets
	   SET spent_epsilon = spent_epsilon + $3::numeric,
	       spent_delta   = spent_delta + $4::numeric,
	       queries       = queries + 1,
	       last_charge   = $8
	 WHERE user_name = $1 AND dataset = $2
	   AND spent_epsilon + $3::numeric <= $5::numeric
	   AND spent_delta + $4::numeric <= $6::numeric
	RETURNING spent_epsilon, spent_delta
), held AS (
	INSERT INTO %[1]s.pending (user_name, dataset, epsilon, delta, replica, created)
	SELECT $1, $2, $3::numeric, $4::numeric, $7, $8 FROM charged
	RETURNING id
), audited AS (
	INSERT INTO %[1]s.audit (reservation, charged, user_name, dataset, epsilon, delta, fingerprint, query, release, replica)
	SELECT held.id, $8, $1, $2, $3::numeric, $4::numeric, $9, $10, $11, $7 FROM held
	RETURNING reservation
)
SELECT held.id, charged.spent_epsilon::text, charged.spent_delta::text FROM charged, held, audited`),
		ensureAccount: f(`INSERT INTO %[1]s.budgets (user_name, dataset) VALUES ($1, $2) ON CONFLICT DO NOTHING`),
		account: f(`SELECT spent_epsilon::text, spent_delta::text, committed_epsilon::text, committed_delta::text, queries, last_charge
  FROM %[1]s.budgets WHERE user_name = $1 AND dataset = $2`),
		// Settle a pending row as committed and publish its release
		// first-writer-wins, in one statement. The pending row must still
		// be there, be this replica's and match the reservation: nothing
		// resolves a reservation twice. Returns (settled, stored) counts.
		commit: f(`WITH p AS (
	DELETE FROM %[1]s.pending
	 WHERE id = $1 AND replica = $2 AND epsilon = $3::numeric AND delta = $4::numeric
	RETURNING user_name, dataset, epsilon, delta
), u AS (
	UPDATE %[1]s.budgets b
	   SET committed_epsilon = b.committed_epsilon + p.epsilon,
	       committed_delta   = b.committed_delta + p.delta
	  FROM p WHERE b.user_name = p.user_name AND b.dataset = p.dataset
	RETURNING 1
), ins AS (
	INSERT INTO %[1]s.releases (cache_key, data, replica, created)
	SELECT $5::bytea, $6::bytea, $2, $7 FROM u WHERE $5::bytea IS NOT NULL
	ON CONFLICT (cache_key) DO NOTHING
	RETURNING 1
)
SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM ins)`),
		readRelease: f(`SELECT data FROM %[1]s.releases WHERE cache_key = $1`),
		// Return a pending row's cost and mark its audit entry, in one
		// statement. Returns the settled count.
		refund: f(`WITH p AS (
	DELETE FROM %[1]s.pending
	 WHERE id = $1 AND replica = $2 AND epsilon = $3::numeric AND delta = $4::numeric
	RETURNING user_name, dataset, epsilon, delta
), u AS (
	UPDATE %[1]s.budgets b
	   SET spent_epsilon = b.spent_epsilon - p.epsilon,
	       spent_delta   = b.spent_delta - p.delta,
	       queries       = b.queries - 1
	  FROM p WHERE b.user_name = p.user_name AND b.dataset = p.dataset
	RETURNING 1
), a AS (
	UPDATE %[1]s.audit SET refunded = $5 WHERE reservation = $1 AND EXISTS (SELECT 1 FROM p)
	RETURNING 1
)
SELECT count(*) FROM u`),
		publish: f(`INSERT INTO %[1]s.releases (cache_key, data, replica, created) VALUES ($1, $2, $3, $4) ON CONFLICT (cache_key) DO NOTHING`),
		lookup:  f(`SELECT data FROM %[1]s.releases WHERE cache_key = $1`),
		accounts: f(`SELECT user_name, dataset, spent_epsilon::text, spent_delta::text, committed_epsilon::text, committed_delta::text, queries, last_charge
  FROM %[1]s.budgets ORDER BY user_name, dataset`),
		pending: f(`SELECT id, user_name, dataset, epsilon::text, delta::text, replica, created FROM %[1]s.pending ORDER BY id`),
		// One page of the audit history after reservation $1; $2 and $3
		// filter by user and dataset ('' = any), $4 by time (NULL = any).
		audit: f(`SELECT reservation, charged, user_name, dataset, epsilon::text, delta::text, fingerprint, query, release, replica, refunded
  FROM %[1]s.audit
 WHERE reservation > $1 AND ($2 = '' OR user_name = $2) AND ($3 = '' OR dataset = $3) AND ($4::timestamptz IS NULL OR charged >= $4)
 ORDER BY reservation LIMIT $5`),
	}
}
