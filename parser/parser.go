package parser

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// Dialect is the SQL dialect of the text given to Parse: the dialect of the
// client's wire protocol, not of the backend.
type Dialect uint8

const (
	Postgres Dialect = iota
	MySQL
)

func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	}
	return fmt.Sprintf("dialect(%d)", uint8(d))
}

// ParseDialect accepts the names String returns (and the common aliases
// "postgresql", "pg", "mariadb").
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "postgres", "postgresql", "pg":
		return Postgres, nil
	case "mysql", "mariadb":
		return MySQL, nil
	}
	return 0, fmt.Errorf("unknown SQL dialect %q (want postgres or mysql)", s)
}

// Parse splits sql into statements and classifies each one. It fails only
// when the text as a whole is not valid SQL of the dialect, with a
// *sqlerr.Error of code SyntaxError; PostgreSQL and MySQL also reject a
// whole multi-statement string when any part of it is malformed. Statements
// the proxy will not run are returned as StmtRefused, never as an error, so
// that the front end can report them in order.
//
// Text that contains no statement at all ("", ";", a comment) yields one
// StmtEmpty statement, which the PostgreSQL front end answers with
// EmptyQueryResponse.
func Parse(d Dialect, sql string) ([]ir.Statement, error) {
	var (
		stmts []ir.Statement
		err   error
	)
	switch d {
	case Postgres:
		stmts, err = parsePostgres(sql)
	case MySQL:
		stmts, err = parseMySQL(sql)
	default:
		return nil, sqlerr.New(sqlerr.Internal, "unknown SQL dialect %d", uint8(d))
	}
	if err != nil {
		return nil, err
	}
	return orEmpty(stmts), nil
}

// orEmpty is Parse's result for the statements of a text: no statement is
// one StmtEmpty.
func orEmpty(stmts []ir.Statement) []ir.Statement {
	if len(stmts) == 0 {
		return []ir.Statement{{Kind: ir.StmtEmpty}}
	}
	return stmts
}

// trimStatement removes the surrounding blanks and semicolons of one
// statement's text (TiDB hands empty statements' semicolons to the next
// statement: "SELECT 1;;SELECT 2").
func trimStatement(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r == ';' || unicode.IsSpace(r) })
}
