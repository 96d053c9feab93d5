package policies

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// walker records the line of every field by its dotted path, the order of
// the keys of every mapping, and reports keys the schema does not know
// (strict decoding: a misspelt key such as "max_row_per_unit" would
// otherwise silently fall back to its default).
type walker struct {
	file  string
	lines map[string]int
	// values holds the value node of every recorded path, to tell apart
	// the keys of a flow mapping that share a line (decodeProblems).
	values   map[string]*yaml.Node
	order    map[string][]string
	problems Problems
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func newWalker(file string) *walker {
	return &walker{file: file, lines: map[string]int{}, values: map[string]*yaml.Node{}, order: map[string][]string{}}
}

func (w *walker) problem(line int, path, format string, args ...any) {
	w.problems = append(w.problems, Problem{
		File: w.file, Line: line, Path: path,
		Message: prefixPath(path, fmt.Sprintf(format, args...)),
	})
}

func prefixPath(path, msg string) string {
	if path == "" {
		return msg
	}
	return path + ": " + msg
}

func joinPath(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// record keeps the first line and value seen for a path: with YAML merge
// keys the mapping's own key wins over the merged anchor.
func (w *walker) record(path string, line int, value *yaml.Node) {
	if _, ok := w.lines[path]; !ok {
		w.lines[path] = line
		w.values[path] = value
	}
}

// lowerKeys reports whether the keys of the mapping at path are table or
// column names, which are matched case-insensitively and stored lower-case.
func lowerKeys(path string) bool {
	parts := strings.Split(path, ".")
	return (len(parts) == 3 && parts[0] == "datasets" && parts[2] == "tables") ||
		(len(parts) == 5 && parts[0] == "datasets" && parts[2] == "tables" && parts[4] == "columns")
}

func (w *walker) walk(n *yaml.Node, t reflect.Type, path string) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return // decodes itself from a scalar
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind == yaml.MappingNode {
			w.walkStruct(n, t, path)
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			w.walkMap(n, t, path)
		}
	case reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			w.walkSlice(n, t, path)
		}
	}
	// Scalars and interfaces: yaml.v3 reports type mismatches when decoding.
}

// mergeTargets returns the mappings a "<<" merge key pulls in.
func mergeTargets(v *yaml.Node) []*yaml.Node {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		var out []*yaml.Node
		for _, c := range v.Content {
			out = append(out, mergeTargets(c)...)
		}
		return out
	}
	return []*yaml.Node{v}
}

func isMerge(k *yaml.Node) bool { return k.Tag == "!!merge" || (k.Value == "<<" && k.Tag == "") }

func (w *walker) walkStruct(n *yaml.Node, t reflect.Type, path string) {
	fields := map[string]reflect.Type{}
	var known []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		fields[name] = f.Type
		known = append(known, name)
	}
	sort.Strings(known)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			for _, m := range mergeTargets(v) {
				w.walk(m, t, path)
			}
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			where := path
			if where == "" {
				where = "the top level"
			}
			if s := closest(k.Value, known); s != "" {
				w.problem(k.Line, joinPath(path, k.Value), "unknown key %q in %s; did you mean %q?", k.Value, where, s)
			} else {
				w.problem(k.Line, joinPath(path, k.Value), "unknown key %q in %s; the keys allowed there are %s", k.Value, where, strings.Join(known, ", "))
			}
			continue
		}
		child := joinPath(path, k.Value)
		w.record(child, k.Line, v)
		w.walk(v, ft, child)
	}
}

func (w *walker) walkMap(n *yaml.Node, t reflect.Type, path string) {
	lower := lowerKeys(path)
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			for _, m := range mergeTargets(v) {
				w.walk(m, t, path)
			}
			continue
		}
		seg := k.Value
		if lower {
			seg = strings.ToLower(seg)
		}
		if prev, dup := seen[seg]; dup {
			// Exact duplicates are reported by yaml.v3 itself; only keys
			// that differ by case collide here, after lower-casing.
			if prev.Value != k.Value {
				w.problem(k.Line, joinPath(path, seg), "%q and %q (line %d) name the same table or column (names are case-insensitive); keep one", k.Value, prev.Value, prev.Line)
			}
			continue
		}
		seen[seg] = k
		child := joinPath(path, seg)
		w.record(child, k.Line, v)
		w.order[path] = append(w.order[path], seg)
		w.walk(v, t.Elem(), child)
	}
}

func (w *walker) walkSlice(n *yaml.Node, t reflect.Type, path string) {
	names := map[string]bool{}
	for i, item := range n.Content {
		child := joinPath(path, strconv.Itoa(i))
		w.record(child, item.Line, item)
		w.walk(item, t.Elem(), child)
		if path != "users" {
			continue
		}
		// Users are also addressed by name: users.alice.budgets.census.
		name := strings.ToLower(scalarField(item, "name"))
		if name == "" || isDigits(name) || names[name] {
			continue
		}
		names[name] = true
		alias := joinPath(path, name)
		for p, l := range w.lines {
			if p == child || strings.HasPrefix(p, child+".") {
				w.record(alias+strings.TrimPrefix(p, child), l, w.values[p])
			}
		}
	}
}

// scalarField returns the scalar value of key in mapping n ("" if absent).
func scalarField(n *yaml.Node, key string) string {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// closest returns the known key within edit distance 2 of s, if any, for a
// "did you mean" hint.
func closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
