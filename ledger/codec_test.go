package ledger

import (
	"bytes"
	"context"
	"math/big"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/ddp-proxy/ddp-proxy/budget"
)

// A ledger written before the binary codec (format version 2) holds JSON
// records: it opens,
// its budget arithmetic goes on exactly from them, a reservation left
// pending by the old version stays charged and reads back, and the audit
// history reads both forms.
func TestOpenReadsJSONRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ann := accountKey("ann", "census")
	// What the previous version wrote: ann spent 3/10 + 1/10 (pending),
	// committed 3/10; reservation 7 pending; audit entries 6 and 7.
	boltUpdate(t, path, func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keyVersion, []byte(formatVersion2)); err != nil {
			return err
		}
		if err := budgetPut(tx, bucketAccounts, ann, []byte(
			`{"spent_epsilon":"2/5","spent_delta":"0","committed_epsilon":"3/10","committed_delta":"0","queries":2,"last_charge":"2026-03-01T12:00:00Z"}`)); err != nil {
			return err
		}
		if err := budgetPut(tx, bucketPending, idKey(7), []byte(
			`{"account":"A2FubmNlbnN1cw==","epsilon":"1/10","delta":"0","time":"2026-03-01T12:00:00Z","replica":"old"}`)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketPending).SetSequence(7); err != nil {
			return err
		}
		ab := tx.Bucket(bucketAudit)
		if err := ab.Put(idKey(6), []byte(`{"time":"2026-03-01T11:00:00Z","account":"A2FubmNlbnN1cw==","epsilon":"3/10","delta":"0","fingerprint":"f6","query":"SELECT 6"}`)); err != nil {
			return err
		}
		return ab.Put(idKey(7), []byte(`{"time":"2026-03-01T12:00:00Z","account":"A2FubmNlbnN1cw==","epsilon":"1/10","delta":"0","query":"SELECT 7","replica":"old"}`))
	})
	h := harnessAt(t, path)
	if got := h.spentExact("ann", "census"); got.eps.RatString() != "2/5" {
		t.Fatalf("ann spent %s from the JSON record, want 2/5", got.eps.RatString())
	}
	p, err := h.l.Pending()
	if err != nil || len(p) != 1 || p[0].ID != 7 || p[0].Cost.Epsilon != 0.1 || p[0].Replica != "old" || !p[0].Time.Equal(at) {
		t.Fatalf("Pending() = %+v, %v; want reservation 7 of 0.1 by replica old at %v", p, err, at)
	}
	// A new charge rewrites ann's account in binary, from the exact
	// JSON total: 2/5 + 3/5 = 1 fits a limit of exactly 1.
	r, err := h.l.Charge(context.Background(), budget.Charge{User: "ann", Dataset: "census", Cost: eps(0.6), Query: "SELECT 8"}, eps(1))
	if err != nil {
		t.Fatalf("charging the rest of the budget: %v", err)
	}
	if _, err := r.Commit("k", []byte("release")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.l.Reserve(context.Background(), "ann", "census", eps(1e-9), eps(1)); err == nil {
		t.Fatal("charged beyond a limit of 1 after 2/5 (JSON) + 3/5 (binary)")
	}
	if err := h.l.checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := h.l.db.View(func(tx *bolt.Tx) error {
		// Marked version 3 by Open: a ddp-proxy that reads only
		// version 2 now refuses it by version, not as damaged.
		if v := string(tx.Bucket(bucketMeta).Get(keyVersion)); v != formatVersion {
			t.Errorf("version %q after opening a version 2 file, want %q", v, formatVersion)
		}
		if v := tx.Bucket(bucketAccounts).Get(ann); len(v) == 0 || v[0] != recordBinary {
			t.Errorf("ann's account after a charge starts %q, want the binary tag", v[:min(len(v), 1)])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got []string
	err = h.l.Audit(context.Background(), budget.AuditFilter{}, func(e budget.AuditEntry) error {
		got = append(got, e.Query+"/"+e.User+"/"+big.NewRat(0, 1).SetFloat64(e.Cost.Epsilon).FloatString(1))
		return nil
	})
	if want := "SELECT 6/ann/0.3 SELECT 7/ann/0.1 SELECT 8/ann/0.6"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("audit = %q, %v; want %q", strings.Join(got, " "), err, want)
	}
	h.checkAndClose()
}

func TestRecordCodecRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 5, time.FixedZone("X", 3600))
	big1, _ := new(big.Rat).SetString("123456789012345678901234567890/7")
	a := account{spent: exact{big1, big.NewRat(1, 1000000)}, committed: exact{big.NewRat(3, 10), new(big.Rat)},
		queries: 1 << 40, lastCharge: at}
	v, err := a.encode()
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeAccount(v)
	if err != nil {
		t.Fatal(err)
	}
	if !b.spent.equal(a.spent) || !b.committed.equal(a.committed) || b.queries != a.queries || !b.lastCharge.Equal(at) {
		t.Errorf("account %+v decoded as %+v", a, b)
	}
	neg := account{spent: exact{big.NewRat(-1, 3), new(big.Rat)}, committed: zeroExact()}
	v, _ = neg.encode()
	if c, err := decodeAccount(v); err != nil || c.spent.eps.Cmp(big.NewRat(-1, 3)) != 0 || !c.lastCharge.IsZero() {
		t.Errorf("negative rational / zero time: %+v, %v", c, err)
	}
	p := pending{accountKey: accountKey("ann\xff", "census"), cost: exact{big.NewRat(1, 10), big.NewRat(1, 1<<30)}, time: at, replica: "r1"}
	v, _ = p.encode()
	q, err := decodePending(v)
	if err != nil || !bytes.Equal(q.accountKey, p.accountKey) || !q.cost.equal(p.cost) || !q.time.Equal(at) || q.replica != "r1" {
		t.Errorf("pending %+v decoded as %+v, %v", p, q, err)
	}
	// Every strict prefix and every extension of a record is refused:
	// a record cut short or grown never reads as another value.
	for i := range len(v) {
		if _, err := decodePending(v[:i]); err == nil {
			t.Errorf("pending record cut to %d of %d bytes decoded", i, len(v))
		}
	}
	if _, err := decodePending(append(bytes.Clone(v), 0)); err == nil {
		t.Error("pending record with a trailing byte decoded")
	}
	zeroDen := &enc{b: []byte{recordBinary}}
	zeroDen.bytes(accountKey("a", "b"))
	zeroDen.b = append(zeroDen.b, 0, 1, 1, 0) // sign 0, numerator 1, empty denominator
	if _, err := decodePending(zeroDen.b); err == nil {
		t.Error("a rational with a zero denominator decoded")
	}
}

func FuzzDecodeRecords(f *testing.F) {
	a, _ := account{spent: exact{big.NewRat(7, 10), new(big.Rat)}, committed: zeroExact()}.encode()
	p, _ := pending{accountKey: accountKey("u", "d"), cost: exact{big.NewRat(1, 10), new(big.Rat)}}.encode()
	au, _ := auditRecord{Account: accountKey("u", "d"), Cost: exact{big.NewRat(1, 10), new(big.Rat)}, Query: "q"}.encode()
	for _, s := range [][]byte{a, p, au, []byte(`{"spent_epsilon":"1"}`), {recordBinary}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		// Never panics; what decodes re-encodes to a record that decodes
		// to the same values.
		if a, err := decodeAccount(v); err == nil && a.spent.eps != nil && !isJSONRecord(v) {
			w, err := a.encode()
			if err != nil {
				t.Fatal(err)
			}
			b, err := decodeAccount(w)
			if err != nil || !b.spent.equal(a.spent) || !b.committed.equal(a.committed) || b.queries != a.queries {
				t.Fatalf("account %x did not round-trip: %v", v, err)
			}
		}
		_, _ = decodePending(v)
		_, _ = decodeAuditRecord(v)
	})
}
