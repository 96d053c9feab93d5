// Command ddp-proxy is the privacy proxy: one binary with subcommands.
//
//	ddp-proxy serve --policy F                 run the proxy
//	ddp-proxy reload [--policy F] [--pid-file P] make a running proxy reload its policy
//	ddp-proxy check FILE                       validate a policy file
//	ddp-proxy explain --policy F [flags] SQL   privacy plan of a query (no budget spent)
//	ddp-proxy budget --policy F [--user U]     spent and remaining budget per user and dataset
//	ddp-proxy audit --policy F [--user U] [--since T] [--json]  the ledger's charges
//	ddp-proxy ledger compact --policy F        rewrite the ledger file (offline)
//	ddp-proxy ledger export|import --policy F  move a ledger between bbolt and PostgreSQL (JSON)
//	ddp-proxy --version                        module version and VCS revision
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
)

// exitError carries a process exit status without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	os.Exit(mainStatus(os.Args[1:]))
}

// mainStatus runs the command line args and returns the process exit
// status, printing an error that carries no status of its own.
func mainStatus(args []string) int {
	// stderr is buffered (logBuffer: one write per batch of log lines,
	// not per private query) and flushed before the process exits.
	stderr := newLogBuffer(os.Stderr, logFlushEvery)
	log, _ := newLogger(stderr, "text", "info")
	err := run(context.Background(), args, os.Stdout, stderr, log)
	_ = stderr.Close()
	var ee exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintln(os.Stderr, "ddp-proxy:", err)
		return 1
	}
}

const usage = `usage: ddp-proxy <command> [arguments]

commands:
  demo [--dir D] [--postgres ADDR] [--mysql ADDR]
                                     build a demo database and serve it (psql to 127.0.0.1:15432)
  serve --policy FILE [--pid-file F] [--log-format text|json] [--log-level debug|info|warn|error]
        [--cpuprofile F] [--memprofile F] [--gc-percent N]
                                     run the proxy until SIGTERM; SIGHUP reloads the policy
  reload [--policy FILE] [--pid-file F]
                                     validate FILE and make the running proxy reload it (SIGHUP)
  check [--connect] FILE             validate a policy file (file:line errors); --connect checks the backend schema too
  explain --policy FILE [--dialect postgres|mysql] [--user U] [--epsilon E] [--json] SQL
                                     show the privacy plan of a query; spends nothing
  budget --policy FILE [--user U]    show spent and remaining privacy budget (also while serve runs)
  audit --policy FILE [--user U] [--dataset D] [--since T] [--json]
                                     show the ledger's charges: time, user, ε, δ, query (also while serve runs)
  ledger compact --policy FILE       apply ledger.retention and rewrite the ledger file to its live size (offline)
  ledger export|import --policy FILE the whole ledger as JSON on stdout / from stdin into an empty
                                     ledger (to move between bbolt and postgres)
  estimate-dependence --policy FILE --table T --columns A,B --attributes X,Y
                                     fit a ddp dependence model from data (advisory)
  --version                          module version and VCS revision of this binary
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitError{2}
	}
	switch args[0] {
	case "demo":
		return cmdDemo(ctx, args[1:], stdout, stderr, log)
	case "serve":
		return cmdServe(ctx, args[1:], stdout, stderr, log)
	case "reload":
		return cmdReload(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "explain":
		return cmdExplain(ctx, args[1:], stdout, stderr)
	case "budget":
		return cmdBudget(ctx, args[1:], stdout, stderr)
	case "audit":
		return cmdAudit(ctx, args[1:], stdout, stderr)
	case "ledger":
		return cmdLedger(ctx, args[1:], os.Stdin, stdout, stderr, log)
	case "estimate-dependence":
		return cmdEstimate(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return cmdVersion(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "ddp-proxy: unknown command %q\n%s", args[0], usage)
	return exitError{2}
}
