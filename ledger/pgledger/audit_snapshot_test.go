package pgledger

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// TestAuditReadIsConsistent: reservations commit out of id order (ids
// come from a sequence when the reservation statement starts; the
// statements commit when they end), so an audit read in pages by id that
// advances past an id still in flight skips that charge for good while
// listing later ones: `ddp-proxy audit`, the budget page's plot and
// /ledger/audit would silently miss a charge the ledger holds. The read
// must be one snapshot: a charge committed before any charge it lists is
// listed too.
func TestAuditReadIsConsistent(t *testing.T) {
	l, dsn, schema := newTest(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	insert := func(q pgx.Tx, where string) {
		t.Helper()
		sql := fmt.Sprintf(`INSERT INTO %s.audit (reservation, charged, user_name, dataset, epsilon, delta, replica)
SELECT g, now(), 'u', 'd', 0.001, 0, 'r' FROM generate_series(1, %d) g WHERE %s`, quoteIdent(schema), 2*auditPage, where)
		var err error
		if q != nil {
			_, err = q.Exec(ctx, sql)
		} else {
			_, err = conn.Exec(ctx, sql)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Every id but one committed; that one is a reservation statement
	// still running on another replica.
	late := int64(auditPage)
	insert(nil, fmt.Sprintf("g <> %d AND g < %d", late, 2*auditPage))
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	tx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	insert(tx, fmt.Sprintf("g = %d", late))

	seen := map[uint64]bool{}
	err = l.Audit(ctx, budget.AuditFilter{}, func(e budget.AuditEntry) error {
		seen[e.Reservation] = true
		if len(seen) == auditPage {
			// Between two pages: the late reservation commits, then a
			// newer one.
			if err := tx.Commit(ctx); err != nil {
				return err
			}
			insert(nil, fmt.Sprintf("g = %d", 2*auditPage))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen[uint64(2*auditPage)] && !seen[uint64(late)] {
		t.Errorf("the audit read listed charge %d but skipped charge %d, which committed before it", 2*auditPage, late)
	}
	if len(seen) < 2*auditPage-2 {
		t.Errorf("the audit read listed %d charges, want at least the %d committed before it", len(seen), 2*auditPage-2)
	}
}
