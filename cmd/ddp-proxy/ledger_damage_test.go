package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ddp-proxy/ddp-proxy/demo"
)

// envMainArgs makes TestMainHelper run ddp-proxy's main with these
// arguments (separated by the ASCII unit separator, 0x1f) in a child process.
const envMainArgs = "DDP_TEST_MAIN_ARGS"

// TestMainHelper is the child process of tests that need the real exit
// status and stderr of ddp-proxy, including a runtime crash dump, which
// would kill an in-process test. It does nothing in a normal run.
func TestMainHelper(t *testing.T) {
	args := os.Getenv(envMainArgs)
	if args == "" {
		t.Skip("only runs as the child of another test")
	}
	os.Exit(mainStatus(strings.Split(args, "\x1f")))
}

// runMain runs ddp-proxy with args in a child process.
func runMain(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainHelper$")
	cmd.Env = append(os.Environ(), envMainArgs+"="+strings.Join(args, "\x1f"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	dieWithParent(cmd)
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return errb.String(), 0
}

// TestDamagedLedgerRefused: serve and budget on a damaged ledger exit with
// status 1 and a message that names the file and the remedy, not with a
// Go crash dump, and leave the file as it was. An intact ledger still
// opens.
func TestDamagedLedgerRefused(t *testing.T) {
	files, err := demo.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A ledger as ddp-proxy creates it.
	if stderr, code := runMain(t, "budget", "--policy", files.Policy); code != 0 {
		t.Fatalf("budget on a new ledger: exit %d\n%s", code, stderr)
	}
	intact, err := os.ReadFile(files.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	const pageSize = 4096 // bbolt's default on this platform (os.Getpagesize)
	if os.Getpagesize() != pageSize {
		t.Skipf("page size %d", os.Getpagesize())
	}
	flip := func(b []byte, off int) []byte {
		b = bytes.Clone(b)
		b[off] ^= 0x5a
		return b
	}
	damages := []struct {
		name, want string
		file       []byte
	}{
		{"empty", "the file is empty", nil},
		{"truncated to 8 KiB", "cut short", intact[:8192]},
		{"truncated mid-page", "cut short", intact[:3*pageSize+1000]},
		{"meta page flipped", "meta page 1 is damaged", flip(intact, pageSize+16+40)},
		{"data pages flipped", "where a branch or leaf page belongs", func() []byte {
			// Every leaf page's type, so the root bucket's page is hit.
			b := bytes.Clone(intact)
			for off := 2 * pageSize; off+pageSize <= len(b); off += pageSize {
				if binary.NativeEndian.Uint16(b[off+8:]) == 0x02 {
					b[off+8] = 0x40
				}
			}
			return b
		}()},
	}
	for _, d := range damages {
		for _, cmd := range []string{"serve", "budget"} {
			t.Run(d.name+"/"+cmd, func(t *testing.T) {
				if err := os.WriteFile(files.Ledger, d.file, 0o600); err != nil {
					t.Fatal(err)
				}
				stderr, code := runMain(t, cmd, "--policy", files.Policy)
				if code != 1 {
					t.Errorf("exit status %d, want 1", code)
				}
				for _, want := range []string{files.Ledger, d.want, "Restore the file from a backup", "move the file away yourself"} {
					if !strings.Contains(stderr, want) {
						t.Errorf("stderr does not contain %q:\n%s", want, stderr)
					}
				}
				for _, crash := range []string{"goroutine ", "panic", "SIGSEGV", "SIGBUS", "fatal error"} {
					if strings.Contains(stderr, crash) {
						t.Errorf("stderr contains %q:\n%s", crash, stderr)
					}
				}
				if after, _ := os.ReadFile(files.Ledger); !bytes.Equal(after, d.file) {
					t.Error("the damaged file was changed")
				}
			})
		}
	}
	if err := os.WriteFile(files.Ledger, intact, 0o600); err != nil {
		t.Fatal(err)
	}
	if stderr, code := runMain(t, "budget", "--policy", files.Policy); code != 0 {
		t.Fatalf("budget on the intact ledger: exit %d\n%s", code, stderr)
	}
}
