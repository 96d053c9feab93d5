package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/ddp-proxy/ddp-proxy/policies"
)

// cmdReload asks a running `ddp-proxy serve` to reload its policy file
// (SIGHUP). With --policy it first validates the file, as the server will,
// and signals nothing when it has problems; the pid comes from --pid-file
// or, by default, from the pid file serve writes next to the policy's
// ledger.
func cmdReload(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	policyPath := fs.String("policy", "", "the policy file the proxy serves: validated first; its ledger path locates the pid file")
	pidFile := fs.String("pid-file", "", "the pid file given to serve --pid-file")
	if err := fs.Parse(args); err != nil {
		return exitError{2}
	}
	if (*policyPath == "" && *pidFile == "") || fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: ddp-proxy reload [--policy FILE] [--pid-file F]   (at least one)")
		return exitError{2}
	}
	path := *pidFile
	if *policyPath != "" {
		pol, err := policies.Load(*policyPath)
		if err != nil {
			fmt.Fprintln(stderr, err)
			fmt.Fprintln(stderr, "ddp-proxy reload: the policy has problems; the running proxy was not asked to reload")
			return exitError{1}
		}
		if path == "" {
			path = defaultPidFile(pol)
		}
	}
	pid, err := readPid(path)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return fmt.Errorf("signalling ddp-proxy (pid %d from %s): %w", pid, path, err)
	}
	fmt.Fprintf(stdout, "ddp-proxy: asked pid %d to reload its policy (the result is in its log)\n", pid)
	return nil
}

func readPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("no pid file %s: is ddp-proxy serve running with this policy? (or use kill -HUP <pid>)", path)
	}
	if err != nil {
		return 0, fmt.Errorf("reading the pid file: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("pid file %s does not hold a process id", path)
	}
	return pid, nil
}
