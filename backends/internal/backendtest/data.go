package backendtest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// Row is one row of the private table (qualifier "t") or of the public
// table (qualifier "p"), by column name.
type Row map[string]ir.Value

// Data is a private table joined many-to-one to a public table on
// t.cid = p.id.
type Data struct {
	Private, Public         []Row
	PrivateName, PublicName string
}

// Column types per dialect, in insertion order.
var (
	privateCols = []string{"uid", "i", "f", "s", "b", "cid"}
	publicCols  = []string{"id", "region", "w"}
	types       = map[string]map[string]string{
		"postgres": {"uid": "BIGINT", "i": "BIGINT", "f": "DOUBLE PRECISION", "s": "TEXT", "b": "BOOLEAN",
			"cid": "BIGINT", "id": "BIGINT UNIQUE", "region": "TEXT", "w": "BIGINT"},
		"sqlite": {"uid": "INTEGER", "i": "INTEGER", "f": "REAL", "s": "TEXT", "b": "BOOLEAN",
			"cid": "INTEGER", "id": "INTEGER UNIQUE", "region": "TEXT", "w": "INTEGER"},
		// MySQL: binary no-pad collation, so text compares as on the
		// others (the loader's session must use ANSI_QUOTES).
		"mysql": {"uid": "BIGINT", "i": "BIGINT", "f": "DOUBLE", "s": "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin", "b": "BOOLEAN",
			"cid": "BIGINT", "id": "BIGINT UNIQUE", "region": "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin", "w": "BIGINT"},
	}
)

// Generate makes units privacy units (plus rows whose unit is NULL), each
// with 1 to 5 rows of small ints, reals with negative values, short ASCII
// text with upper case, spaces and LIKE wildcards, booleans, and NULLs.
func Generate(rng *rand.Rand, units int, suffix string) *Data {
	d := &Data{PrivateName: "ddp_t_" + suffix, PublicName: "ddp_p_" + suffix}
	regions := []string{"north", "south", "east", "west", "Mid"}
	for id := 1; id <= 5; id++ {
		w := ir.Int(int64(rng.IntN(7) - 3))
		if id == 4 {
			w = ir.Null()
		}
		d.Public = append(d.Public, Row{"id": ir.Int(int64(id)), "region": ir.String(regions[id-1]), "w": w})
	}
	// One NULL key: matched by a NULL cid under the null-safe equality
	// only (IS NOT DISTINCT FROM, <=>, IS).
	d.Public = append(d.Public, Row{"id": ir.Null(), "region": ir.String("nowhere"), "w": ir.Int(1)})
	for u := 0; u <= units; u++ {
		uid := ir.Int(int64(u))
		if u == units {
			uid = ir.Null()
		}
		for range 1 + rng.IntN(5) {
			d.Private = append(d.Private, Row{
				"uid": uid,
				"i":   maybeNull(rng, ir.Int(int64(rng.IntN(41)-20))),
				"f":   maybeNull(rng, ir.Float(RandomFloat(rng))),
				"s":   maybeNull(rng, ir.String(randomText(rng))),
				"b":   maybeNull(rng, ir.Bool(rng.IntN(2) == 0)),
				"cid": maybeNull(rng, ir.Int(int64(rng.IntN(7)))), // 0 and 6 match no public row
			})
		}
	}
	return d
}

// RandomFloat draws from values that stress quantization: negatives,
// exact ties at .5 of typical quanta, and non-dyadic decimals.
func RandomFloat(rng *rand.Rand) float64 {
	switch rng.IntN(4) {
	case 0:
		return float64(rng.IntN(41)-20) / 4 // multiples of 0.25 (ties for round)
	case 1:
		return float64(rng.IntN(2001)-1000) / 100
	case 2:
		return []float64{0.1, -0.1, 0.3, 2.5, -2.5, 0.05, -0.15, 12.125}[rng.IntN(8)]
	}
	return rng.Float64()*30 - 15
}

func maybeNull(rng *rand.Rand, v ir.Value) ir.Value {
	if rng.IntN(8) == 0 {
		return ir.Null()
	}
	return v
}

const textAlphabet = "abAB _%"

func randomText(rng *rand.Rand) string {
	n := rng.IntN(5)
	b := make([]byte, n)
	for i := range b {
		b[i] = textAlphabet[rng.IntN(len(textAlphabet))]
	}
	return string(b)
}

// Load creates both tables in db (dialect "postgres" or "sqlite") and
// inserts the rows.
func (d *Data) Load(ctx context.Context, db *sql.DB, dialect string) error {
	if err := createInsert(ctx, db, dialect, d.PublicName, publicCols, d.Public); err != nil {
		return err
	}
	return createInsert(ctx, db, dialect, d.PrivateName, privateCols, d.Private)
}

// Drop removes both tables.
func (d *Data) Drop(ctx context.Context, db *sql.DB) error {
	for _, name := range []string{d.PrivateName, d.PublicName} {
		if _, err := db.ExecContext(ctx, `DROP TABLE IF EXISTS "`+name+`"`); err != nil {
			return err
		}
	}
	return nil
}

func createInsert(ctx context.Context, db *sql.DB, dialect, name string, cols []string, rows []Row) error {
	defs := make([]string, len(cols))
	phs := make([]string, len(cols))
	for i, c := range cols {
		defs[i] = `"` + c + `" ` + types[dialect][c]
		phs[i] = "?"
		if dialect == "postgres" {
			phs[i] = fmt.Sprintf("$%d", i+1)
		}
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE "`+name+`" (`+strings.Join(defs, ", ")+`)`); err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	ins := `INSERT INTO "` + name + `" VALUES (` + strings.Join(phs, ", ") + `)`
	for _, r := range rows {
		args := make([]any, len(cols))
		for i, c := range cols {
			args[i] = driverArg(r[c])
		}
		if _, err := db.ExecContext(ctx, ins, args...); err != nil {
			return fmt.Errorf("insert into %s: %w", name, err)
		}
	}
	return nil
}

func driverArg(v ir.Value) any {
	switch v.Kind {
	case ir.KindInt:
		return v.Int
	case ir.KindFloat:
		return v.Float
	case ir.KindString:
		return v.Str
	case ir.KindBool:
		return v.Bool
	}
	return nil
}
