package policies

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads, decodes, completes and validates the policy file at path.
// The error is Problems (every problem, one per line, with file:line) or an
// I/O error.
func Load(path string) (*Policy, error) { return LoadWith(path, LoadOptions{}) }

// LoadOptions changes what loading requires.
type LoadOptions struct {
	// Offline loads a policy for inspection (check, explain, budget):
	// environment variables that are not set (the backend DSN's, the users'
	// passwords) are not problems; they are listed in Policy.MissingEnv
	// instead. Malformed references are still problems. Never serve with
	// an offline policy: users whose password is missing cannot log in.
	Offline bool
}

// LoadWith is Load with options.
func LoadWith(path string, opts LoadOptions) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	return loadBytes(path, data, opts)
}

// LoadBytes is Load for a policy already in memory. name is used in
// messages and, when not empty, its directory is the base of relative
// paths (the ledger file, a SQLite database file).
func LoadBytes(name string, data []byte) (*Policy, error) {
	return loadBytes(name, data, LoadOptions{})
}

func loadBytes(name string, data []byte, opts LoadOptions) (*Policy, error) {
	root, ps := parseDocument(name, data)
	if len(ps) > 0 {
		return nil, ps
	}
	w := newWalker(name)
	w.walk(root, reflect.TypeFor[Policy](), "")
	p := &Policy{Source: name}
	if err := root.Decode(p); err != nil {
		w.problems = append(w.problems, decodeProblems(name, err, w)...)
	}
	// Structural problems (unknown keys, wrong YAML types) stop here: the
	// decoded struct is incomplete and checking it would pile spurious
	// problems on top of the real ones.
	if len(w.problems) > 0 {
		return nil, sortProblems(w.problems)
	}
	p.lines = w.lines
	p.fillOrder(w.order)

	baseDir := ""
	if name != "" {
		baseDir = filepath.Dir(name)
	}
	ps = p.resolveEnvironment(opts.Offline)
	p.resolvePaths(baseDir)
	if err := p.Validate(); err != nil {
		var vps Problems
		if !errors.As(err, &vps) {
			return nil, err
		}
		ps = append(ps, vps...)
	}
	if len(ps) > 0 {
		return nil, sortProblems(ps)
	}
	return p, nil
}

// parseDocument parses exactly one YAML document whose top level is a
// mapping.
func parseDocument(name string, data []byte) (*yaml.Node, Problems) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Problems{{File: name, Message: "the policy file is empty; start from policies/examples/census.yaml"}}
		}
		return nil, Problems{syntaxProblem(name, err)}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, Problems{{File: name, Line: extra.Line, Message: "a policy file holds one YAML document; remove the second one (after ---)"}}
	case !errors.Is(err, io.EOF):
		return nil, Problems{syntaxProblem(name, err)}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, Problems{{File: name, Line: root.Line, Message: "the top level of a policy file must be a mapping (version:, backend:, users:, datasets:)"}}
	}
	return root, nil
}

// yaml.v3 reports positions only inside its error text ("yaml: line 3: ..."
// for syntax, "line 3: ..." per type error); this is its documented format.
var (
	yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
)

func syntaxProblem(name string, err error) Problem {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{File: name, Line: line, Message: "YAML syntax error: " + m[2]}
	}
	return Problem{File: name, Message: "YAML syntax error: " + strings.TrimPrefix(msg, "yaml: ")}
}

// decodeProblems turns yaml.v3 type errors into Problems, naming the
// deepest field path on the offending line.
func decodeProblems(name string, err error, w *walker) Problems {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return Problems{syntaxProblem(name, err)}
	}
	var ps Problems
	for _, e := range te.Errors {
		m := yamlLineRE.FindStringSubmatch(e)
		if m == nil {
			ps = append(ps, Problem{File: name, Message: e})
			continue
		}
		line, _ := strconv.Atoi(m[1])
		path := pathAtLine(w, line, m[2])
		ps = append(ps, Problem{File: name, Line: line, Path: path, Message: prefixPath(path, friendlyTypeError(m[2]))})
	}
	return ps
}

var unmarshalRE = regexp.MustCompile("^cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.*)$")

// friendlyTypeError rewords yaml.v3's "cannot unmarshal !!str `x` into
// int" for a DBA who has never seen a Go type.
func friendlyTypeError(msg string) string {
	m := unmarshalRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	want, ok := map[string]string{
		"int": "an integer", "int64": "an integer", "float64": "a number",
		"string": "a string", "bool": "true or false", "[]float64": "a list of numbers",
		"[]int64": "a list of integers", "[]interface {}": "a list",
	}[m[3]]
	switch {
	case ok:
	case strings.HasPrefix(m[3], "map["), strings.HasPrefix(m[3], "policies."):
		want = "a mapping (key: value lines)"
	case strings.HasPrefix(m[3], "[]"):
		want = "a list"
	default:
		return msg
	}
	got := m[2]
	switch m[1] {
	case "seq":
		got = "a list"
	case "map":
		got = "a mapping"
	default:
		got = strconv.Quote(got)
	}
	return "expected " + want + ", not " + got
}

// pathAtLine returns the deepest recorded path whose key is on line,
// preferring the by-name form of a user (users.alice) to the index form.
// When a path's value is the one msg (a yaml.v3 type error) names, only
// such paths are candidates: in `{epsilon: "lots", delta: 1e-6}` the
// problem is epsilon's, although delta is on the same line and as deep.
func pathAtLine(w *walker, line int, msg string) string {
	lines := w.lines
	var matching map[string]int
	for p, l := range lines {
		if l == line && valueIs(w.values[p], msg) {
			if matching == nil {
				matching = map[string]int{}
			}
			matching[p] = l
		}
	}
	if matching != nil {
		lines = matching
	}
	best := ""
	better := func(p string) bool {
		dp, db := strings.Count(p, "."), strings.Count(best, ".")
		if dp != db {
			return dp > db
		}
		if ip, ib := userIndexForm(p), userIndexForm(best); ip != ib {
			return ib
		}
		return p < best
	}
	for p, l := range lines {
		if l == line && (best == "" || better(p)) {
			best = p
		}
	}
	return best
}

// valueIs reports whether n is the node yaml.v3's "cannot unmarshal !!tag
// `value` into T" describes: a sequence or mapping by its tag, a scalar by
// its value (yaml.v3 shortens values over 10 bytes to 7 and "...").
func valueIs(n *yaml.Node, msg string) bool {
	m := unmarshalRE.FindStringSubmatch(msg)
	if n == nil || m == nil {
		return false
	}
	n = deref(n)
	switch m[1] {
	case "seq":
		return n.Kind == yaml.SequenceNode
	case "map":
		return n.Kind == yaml.MappingNode
	}
	if n.Kind != yaml.ScalarNode {
		return false
	}
	if short, ok := strings.CutSuffix(m[2], "..."); ok && len(n.Value) > 10 {
		return strings.HasPrefix(n.Value, short)
	}
	return n.Value == m[2]
}

func userIndexForm(p string) bool {
	parts := strings.SplitN(p, ".", 3)
	return len(parts) >= 2 && parts[0] == "users" && isDigits(parts[1])
}

// sortProblems orders problems by line (unknown lines last), keeping the
// order of discovery among equals.
func sortProblems(ps Problems) Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		li, lj := ps[i].Line, ps[j].Line
		if li == 0 || lj == 0 {
			return lj == 0 && li != 0
		}
		return li < lj
	})
	return ps
}

// fillOrder sets DatasetNames, TableNames and ColumnNames in file order.
func (p *Policy) fillOrder(order map[string][]string) {
	p.DatasetNames = order["datasets"]
	for _, dn := range p.DatasetNames {
		d := p.Datasets[dn]
		if d == nil {
			continue
		}
		dp := joinPath("datasets", dn)
		d.TableNames = order[joinPath(dp, "tables")]
		for _, tn := range d.TableNames {
			if t := findFold(d.Tables, tn); t != nil {
				t.ColumnNames = order[joinPath(dp, "tables."+tn+".columns")]
			}
		}
	}
}

// findFold finds a map entry by case-insensitive key (maps are lower-cased
// only later, by normalize).
func findFold[V any](m map[string]V, key string) V {
	if v, ok := m[key]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	var zero V
	return zero
}

// resolveEnvironment expands ${VAR} in backend.dsn and ledger.dsn and reads every user's
// password_env. It is the only place the package reads the environment.
func (p *Policy) resolveEnvironment(offline bool) Problems {
	c := &checker{p: p}
	if dsn, missing, bad := expandEnv(p.Backend.DSN); bad != "" {
		c.add("backend.dsn", "%s; write environment references as ${NAME}", bad)
	} else if len(missing) > 0 && offline {
		p.addMissingEnv("backend.dsn", missing...)
	} else if len(missing) > 0 {
		what := "environment variable " + missing[0] + " is"
		if len(missing) > 1 {
			what = "environment variables " + strings.Join(missing, ", ") + " are"
		}
		c.add("backend.dsn", "%s not set; export it before starting the proxy, or write the DSN in full", what)
	} else {
		p.Backend.DSN = dsn
	}
	if p.Ledger.DSN != "" {
		if dsn, missing, bad := expandEnv(p.Ledger.DSN); bad != "" {
			c.add("ledger.dsn", "%s; write environment references as ${NAME}", bad)
		} else if len(missing) > 0 && offline {
			p.addMissingEnv("ledger.dsn", missing...)
		} else if len(missing) > 0 {
			c.add("ledger.dsn", "environment variable(s) %s not set; export them before starting the proxy, or write the DSN in full", strings.Join(missing, ", "))
		} else {
			p.Ledger.DSN = dsn
		}
	}
	if name := p.Listen.PeerSecretEnv; name != "" {
		const path = "listen.peer_secret_env"
		v, ok := os.LookupEnv(name)
		switch {
		case !envNameRE.MatchString(name):
			c.add(path, "%q is not an environment variable name; use letters, digits and _", name)
		case !ok && offline:
			p.addMissingEnv(path, name)
		case !ok:
			c.add(path, "environment variable %s is not set; export the replicas' shared secret in it before starting the proxy", name)
		case len(v) < MinPeerSecret:
			c.add(path, "environment variable %s holds %d bytes; the replicas' shared secret needs at least %d (e.g. openssl rand -hex 32)", name, len(v), MinPeerSecret)
		default:
			p.Listen.PeerSecret = v
		}
	}
	for i, u := range p.Users {
		if u == nil || u.PasswordEnv == "" {
			continue
		}
		path := p.userPath(i) + ".password_env"
		if !envNameRE.MatchString(u.PasswordEnv) {
			c.add(path, "%q is not an environment variable name; use letters, digits and _", u.PasswordEnv)
			continue
		}
		v, ok := os.LookupEnv(u.PasswordEnv)
		switch {
		case !ok && offline:
			p.addMissingEnv(path, u.PasswordEnv)
		case !ok:
			c.add(path, "environment variable %s is not set; export the user's password in it before starting the proxy", u.PasswordEnv)
		case v == "":
			c.add(path, "environment variable %s is empty; an empty password would let anyone log in as this user", u.PasswordEnv)
		default:
			u.Password = v
		}
	}
	return c.ps
}

// EnvRef is an environment variable a setting refers to.
type EnvRef struct {
	// Setting is the setting's path as problems name it: backend.dsn,
	// ledger.dsn, users.<name>.password_env.
	Setting string
	Name    string
}

func (p *Policy) addMissingEnv(setting string, names ...string) {
	for _, n := range names {
		p.MissingEnv = append(p.MissingEnv, EnvRef{Setting: setting, Name: n})
	}
}

// MissingEnvOf returns the unset variables setting refers to (an offline
// load; see MissingEnv), in the order it names them, each once.
func (p *Policy) MissingEnvOf(setting string) []string {
	var out []string
	for _, r := range p.MissingEnv {
		if r.Setting == setting && !slices.Contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expandEnv replaces every ${NAME} in s. Only the braced form is expanded:
// a bare $ is common in passwords inside DSNs and must stay as it is. It
// returns the names that are not set, or a description of a malformed
// reference.
func expandEnv(s string) (out string, missing []string, bad string) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), missing, ""
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return "", nil, "unterminated ${ (missing })"
		}
		name := s[i+2 : i+j]
		if !envNameRE.MatchString(name) {
			return "", nil, fmt.Sprintf("${%s} is not a valid environment reference", name)
		}
		v, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

// resolvePaths makes the ledger path and a SQLite database path absolute
// against baseDir (the policy file's directory), so the proxy finds the
// same files whatever its working directory.
func (p *Policy) resolvePaths(baseDir string) {
	if p.Ledger.Path == "" {
		p.Ledger.Path = DefaultLedgerPath
	}
	p.Ledger.Path = resolveFile(baseDir, p.Ledger.Path)
	if p.Listen.TLSCert != "" {
		p.Listen.TLSCert = resolveFile(baseDir, p.Listen.TLSCert)
	}
	if p.Listen.TLSKey != "" {
		p.Listen.TLSKey = resolveFile(baseDir, p.Listen.TLSKey)
	}
	if p.Backend.Driver == "sqlite" {
		p.Backend.DSN = resolveSQLiteDSN(baseDir, p.Backend.DSN)
	}
}

func resolveFile(baseDir, path string) string {
	if baseDir == "" || path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(baseDir, path)
}

// resolveSQLiteDSN resolves the file of a SQLite DSN, either a plain path
// or a "file:path?params" URI; in-memory databases are left alone.
func resolveSQLiteDSN(baseDir, dsn string) string {
	if strings.Contains(dsn, ":memory:") || strings.Contains(dsn, "mode=memory") {
		return dsn
	}
	if rest, ok := strings.CutPrefix(dsn, "file:"); ok {
		path, query, hasQuery := strings.Cut(rest, "?")
		if strings.HasPrefix(path, "/") || path == "" {
			return dsn
		}
		out := "file:" + filepath.ToSlash(resolveFile(baseDir, path))
		if hasQuery {
			out += "?" + query
		}
		return out
	}
	return resolveFile(baseDir, dsn)
}
