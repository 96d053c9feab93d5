package oracle

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyTestsImportOracle enforces the package rule: the oracle is
// exponential and must never reach a release path, so no non-test file in
// the module may import it. It parses import blocks only.
func TestOnlyTestsImportOracle(t *testing.T) {
	const self = "github.com/ddp-proxy/ddp-proxy/sensitivity/oracle"
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return nil // half-written files of other packages are not our business
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				t.Errorf("%s imports the test-only oracle", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
