package pgledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

const (
	formatName = "ddp-proxy budget ledger"
	// SchemaVersion is the version of the tables this ddp-proxy writes.
	// Open refuses a schema with a larger version: a newer proxy may keep
	// charges where this one would not look.
	SchemaVersion = 1
)

// schemaDDL creates version 1. %[1]s is the quoted schema name.
//
// No foreign keys: pending rows are checked against their account by Check,
// and a distributed store (Citus) then needs no co-location rules beyond
// its distribution column.
const schemaDDL = `
CREATE SCHEMA IF NOT EXISTS %[1]s;
CREATE TABLE %[1]s.meta (
	key   text PRIMARY KEY,
	value text NOT NULL
);
CREATE TABLE %[1]s.budgets (
	user_name         text NOT NULL,
	dataset           text NOT NULL,
	spent_epsilon     numeric NOT NULL DEFAULT 0 CHECK (spent_epsilon >= 0),
	spent_delta       numeric NOT NULL DEFAULT 0 CHECK (spent_delta >= 0),
	committed_epsilon numeric NOT NULL DEFAULT 0 CHECK (committed_epsilon >= 0),
	committed_delta   numeric NOT NULL DEFAULT 0 CHECK (committed_delta >= 0),
	queries           bigint NOT NULL DEFAULT 0,
	last_charge       timestamptz,
	PRIMARY KEY (user_name, dataset)
);
CREATE TABLE %[1]s.pending (
	id        bigserial PRIMARY KEY,
	user_name text NOT NULL,
	dataset   text NOT NULL,
	epsilon   numeric NOT NULL CHECK (epsilon >= 0),
	delta     numeric NOT NULL CHECK (delta >= 0),
	replica   text NOT NULL,
	created   timestamptz NOT NULL
);
CREATE TABLE %[1]s.audit (
	reservation bigint PRIMARY KEY,
	charged     timestamptz NOT NULL,
	user_name   text NOT NULL,
	dataset     text NOT NULL,
	epsilon     numeric NOT NULL,
	delta       numeric NOT NULL,
	fingerprint text NOT NULL DEFAULT '',
	query       text NOT NULL DEFAULT '',
	release     text NOT NULL DEFAULT '',
	replica     text NOT NULL,
	refunded    timestamptz
);
CREATE INDEX ON %[1]s.audit (user_name, reservation);
CREATE TABLE %[1]s.releases (
	cache_key bytea PRIMARY KEY,
	data      bytea NOT NULL,
	replica   text NOT NULL,
	created   timestamptz NOT NULL
);
`

// migrate creates the schema where none exists and checks the version of
// one that does, under a transaction-scoped advisory lock so that replicas
// starting together create it once.
func migrate(ctx context.Context, conn *pgx.Conn, schema string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('ddp-proxy ledger schema ' || $1, 0))`, schema); err != nil {
		return err
	}
	q := quoteIdent(schema)
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, q+".meta").Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, fmt.Sprintf(schemaDDL, q)); err != nil {
			return fmt.Errorf("create the ledger tables in schema %s: %w", schema, err)
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s.meta (key, value) VALUES
			('format', $1), ('schema_version', $2), ('created', now()::text)`, q),
			formatName, strconv.Itoa(SchemaVersion)); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	meta := map[string]string{}
	rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT key, value FROM %s.meta`, q))
	if err != nil {
		return err
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		meta[k] = v
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if meta["format"] != formatName {
		return fmt.Errorf("schema %s holds a table meta that is not a ddp-proxy ledger's (format %q): point ledger.schema at another schema", schema, meta["format"])
	}
	v, err := strconv.Atoi(meta["schema_version"])
	if err != nil {
		return fmt.Errorf("schema %s: bad schema_version %q in its meta table", schema, meta["schema_version"])
	}
	if v > SchemaVersion {
		return fmt.Errorf("%w: schema %s has version %d, this ddp-proxy knows versions up to %d: run the ddp-proxy that upgraded it",
			ErrNewerSchema, schema, v, SchemaVersion)
	}
	if v < 1 {
		return fmt.Errorf("schema %s: schema_version %d is not a version ddp-proxy ever wrote", schema, v)
	}
	return tx.Commit(ctx)
}

// ErrNewerSchema is matched by Open's error when the ledger tables were
// written by a newer ddp-proxy.
var ErrNewerSchema = errors.New("the ledger schema is newer than this ddp-proxy")

func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

// validSchema accepts plain lower-case identifiers only: the name is
// spliced (quoted) into every statement, and one spelling per schema
// avoids two replicas quoting it differently.
func validSchema(s string) error {
	if s == "" || len(s) > 63 {
		return fmt.Errorf("ledger schema %q: 1 to 63 characters", s)
	}
	for i, c := range s {
		if c == '_' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return fmt.Errorf("ledger schema %q: only lower-case letters, digits and _ (not first a digit)", s)
	}
	return nil
}
