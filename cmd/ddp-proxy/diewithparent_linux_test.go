package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the child process get SIGKILL when the test binary
// dies without running its cleanups (killed, or go test's -timeout
// panic): an orphaned replica would keep its ledger connections and
// starve the next tests on the same PostgreSQL server ("too many
// clients"). The signal follows the OS thread that started the child;
// Go keeps its threads (none of these tests locks one and exits), so
// it fires only when the process ends.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
