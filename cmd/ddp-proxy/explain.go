package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/parser"
	"github.com/ddp-proxy/ddp-proxy/planner"
	"github.com/ddp-proxy/ddp-proxy/policies"
	"github.com/ddp-proxy/ddp-proxy/session"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

func cmdExplain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "policy file (required)")
	dialect := fs.String("dialect", "postgres", "SQL dialect of the query: postgres or mysql")
	userName := fs.String("user", "", "analyst whose limits apply (default: the first user of the policy)")
	eps := fs.Float64("epsilon", 0, "ε of the query (default: the user's default_epsilon)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitError{2}
	}
	if *policyPath == "" || len(pos) != 1 {
		fmt.Fprintln(stderr, "usage: ddp-proxy explain --policy FILE [--dialect postgres|mysql] [--user U] [--epsilon E] [--json] SQL")
		return exitError{2}
	}
	pol, err := policies.LoadWith(*policyPath, policies.LoadOptions{Offline: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{1}
	}
	d, err := parser.ParseDialect(*dialect)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{2}
	}
	user, err := pickUser(pol, *userName)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError{2}
	}
	explainDependence(ctx, pol, stderr)
	x := explain(planner.NewWith(pol, session.PlannerOptions(pol.Backend.Driver)), user, d, *eps, pos[0])
	if x.Refused && user.MaxEpsilon > 0 && *eps > user.MaxEpsilon {
		// The planner's hint speaks of the session's ε; here it is the flag.
		x.Hint = fmt.Sprintf("choose --epsilon up to %g (user %s's max_epsilon)", user.MaxEpsilon, user.Name)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(x)
	}
	x.WriteText(stdout)
	return nil
}

func pickUser(pol *policies.Policy, name string) (*policies.User, error) {
	if name == "" {
		if len(pol.Users) == 0 {
			return nil, fmt.Errorf("the policy declares no users")
		}
		return pol.Users[0], nil
	}
	u := pol.User(name)
	if u == nil {
		return nil, fmt.Errorf("no user %q in the policy", name)
	}
	return u, nil
}

// explain plans every statement of sql without touching a backend or the
// ledger.
func explain(p *planner.Planner, user *policies.User, d parser.Dialect, eps float64, sql string) planner.Explanation {
	stmts, err := parser.Parse(d, sql)
	if err != nil {
		return planner.Refusal(err)
	}
	var xs []planner.Explanation
	for i := range stmts {
		xs = append(xs, explainStatement(p, user, d, eps, &stmts[i]))
	}
	if len(xs) == 1 {
		return xs[0]
	}
	return planner.Explanation{StatementClass: "multiple", Statements: xs}
}

func explainStatement(p *planner.Planner, user *policies.User, d parser.Dialect, eps float64, st *ir.Statement) planner.Explanation {
	switch st.Kind {
	case ir.StmtRefused:
		return planner.Refusal(st.Refused)
	case ir.StmtSession:
		return planner.Explanation{StatementClass: "session", Notes: []string{"changes or shows session state only"}}
	case ir.StmtEmpty:
		return planner.Explanation{StatementClass: "empty"}
	case ir.StmtExplain:
		return explainStatement(p, user, d, eps, st.Explain)
	case ir.StmtCursor:
		if st.Cursor.Verb == ir.CursorDeclare {
			return explainStatement(p, user, d, eps, st.Cursor.Query)
		}
		return planner.Explanation{StatementClass: "cursor", Notes: []string{"pages through an answer computed at DECLARE"}}
	}
	if st.NumParams > 0 {
		return planner.Refusal(sqlerr.New(sqlerr.InvalidParameterValue, "the query has %d parameters: explain needs literal values", st.NumParams))
	}
	st, err := session.BindTime(st, time.Now(), d == parser.MySQL) // NOW(): as the proxy would read it now
	if err != nil {
		return planner.Refusal(err)
	}
	pl, err := p.Plan(planner.Request{User: user, Epsilon: eps, Dialect: d.String(), Statement: st})
	if err != nil {
		return planner.Refusal(err)
	}
	return pl.Explain(renderer(p.Policy()))
}
