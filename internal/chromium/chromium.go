// Package chromium is a test helper: it renders a page in headless
// Chromium (Debian's chromium package, which .ci/run installs) and returns
// the DOM as the browser built it, or a screenshot. Tests use it to check
// what the admin listener's pages look like to a real browser.
package chromium

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// timeout bounds one Chromium run.
const timeout = 60 * time.Second

// Find returns the Chromium binary. Without it the test is skipped, or
// fails in CI (CI set), where .ci/run installs it.
func Find(t testing.TB) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium package)")
	}
	t.Skip("chromium is not installed (apt-get install chromium)")
	return ""
}

// args are the flags of every run: headless, no sandbox (tests may run
// as root in a container), a profile of the test's own.
func args(t testing.TB, extra ...string) []string {
	return append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-extensions", "--user-data-dir=" + t.TempDir()}, extra...)
}

func run(t testing.TB, bin string, a []string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, a...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(a, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// DumpDOM loads url and returns the serialised DOM after the page loaded.
func DumpDOM(t testing.TB, url string) string {
	t.Helper()
	bin := Find(t)
	return string(run(t, bin, args(t, "--dump-dom", url)))
}

// Screenshot loads url in a width×height window and returns the PNG.
func Screenshot(t testing.TB, url string, width, height int) []byte {
	t.Helper()
	bin := Find(t)
	out := filepath.Join(t.TempDir(), "page.png")
	run(t, bin, args(t, "--screenshot="+out, fmt.Sprintf("--window-size=%d,%d", width, height), "--hide-scrollbars", url))
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	return b
}

// Element is a parsed element of a dumped DOM.
type Element struct {
	Name     string
	Attr     map[string]string
	Text     string // the text directly inside it
	Children []*Element
}

// Parse reads a dumped DOM (HTML as Chromium serialises it) into a tree.
func Parse(dom string) (*Element, error) {
	d := xml.NewDecoder(strings.NewReader(dom))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	root := &Element{Name: "#document"}
	stack := []*Element{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &Element{Name: strings.ToLower(tok.Name.Local), Attr: map[string]string{}}
			for _, a := range tok.Attr {
				name := a.Name.Local
				if a.Name.Space != "" {
					name = a.Name.Space + ":" + name
				}
				e.Attr[name] = a.Value
			}
			top := stack[len(stack)-1]
			top.Children = append(top.Children, e)
			stack = append(stack, e)
		case xml.EndElement:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			stack[len(stack)-1].Text += string(tok)
		}
	}
}

// FindAll returns every element under e (e included) that match accepts.
func (e *Element) FindAll(match func(*Element) bool) []*Element {
	var out []*Element
	var walk func(*Element)
	walk = func(x *Element) {
		if match(x) {
			out = append(out, x)
		}
		for _, c := range x.Children {
			walk(c)
		}
	}
	walk(e)
	return out
}
