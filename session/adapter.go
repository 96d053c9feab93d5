package session

import (
	"context"
	"time"

	"github.com/ddp-proxy/ddp-proxy/catalog/emulated"
	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/policies"
)

// The methods below are what a front-end adapter may use of a Session
// besides Exec, Prepare and Execute (mysqlCore lists them for the MySQL
// adapter). An adapter keeps its own dialect's state (MySQL's variables
// and warnings) and reaches the core only through them, never its fields.

// Parse parses sql in the session's dialect through the shared cache; a
// parse error is observed as a refused statement.
func (s *Session) Parse(sql string) ([]ir.Statement, error) {
	stmts, err := s.p.cache.Parse(s.dialect, sql)
	if err != nil {
		s.parseFailed(err)
	}
	return stmts, err
}

// Epsilon is the ε the session's next private query spends.
func (s *Session) Epsilon() float64 { return s.currentEpsilon() }

// SetEpsilon sets the session's per-query ε (toDefault: back to the
// user's default), with the checks of SET ddp.epsilon.
func (s *Session) SetEpsilon(value string, toDefault bool) error {
	return s.set("ddp.epsilon", value, toDefault)
}

// SetStatementTimeout sets the client's statement timeout (0: none): the
// shorter of MySQL's max_execution_time and MariaDB's max_statement_time,
// which the MySQL layer parses.
func (s *Session) SetStatementTimeout(d time.Duration) { s.stmtTimeout = d }

// SetTimeZone records the MySQL client's time_zone (SYSTEM is UTC here):
// a statement that reads the current time is refused in another zone
// (bindStatement). A PostgreSQL client's is its TimeZone setting.
func (s *Session) SetTimeZone(z string) { s.mysqlZone = z }

// Names is how the session's client names the policy's tables
// (policies.Policy.Resolve).
func (s *Session) Names() policies.Names { return s.names() }

// Policy is the policy in force (the newest generation's: a local
// statement that never reaches Exec sees a reload too).
func (s *Session) Policy() *policies.Policy { return s.p.current().pol }

// Exposed is every table the policy declares with the columns the
// emulated catalogs show of it (emulated.Describe, the one builder).
func (s *Session) Exposed(ctx context.Context) ([]emulated.Exposed, error) {
	return s.Describe(ctx, emulated.AllTables(s.Policy()))
}

// Describe is tables as the emulated catalogs show them
// (emulated.Describe), named as the session's client names them.
func (s *Session) Describe(ctx context.Context, tables []*policies.Table) ([]emulated.Exposed, error) {
	lister, _ := s.p.backend.(emulated.ColumnLister)
	return emulated.Describe(ctx, s.Policy(), s.names(), tables, lister)
}
