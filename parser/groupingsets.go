package parser

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// maxGroupingSets bounds the expansion of ROLLUP, CUBE and GROUPING SETS
// (PostgreSQL's own limit is 4096): each set is a released histogram or a
// sum over one, and a CUBE of 12 keys is no query a report needs.
const maxGroupingSets = 256

const msgGroupingArg = "arguments to GROUPING must be grouping expressions of the query (columns or expressions of its GROUP BY)"

// setList is the grouping sets one GROUP BY item stands for; each set
// lists indexes into the query's key list.
type setList [][]int

// keyList collects the distinct keys written in a GROUP BY clause, in
// order of first appearance, so that a key named in several sets is one
// key of the query.
type keyList struct {
	keys []groupKey
	// text are the keys' groupKeyText, computed once a second key
	// arrives: most GROUP BY clauses name one key, which needs none.
	text []string
}

func (l *keyList) add(k groupKey) int {
	if len(l.keys) == 0 {
		l.keys = append(l.keys, k)
		return 0
	}
	if len(l.text) == 0 {
		l.text = append(l.text, groupKeyText(l.keys[0]))
	}
	t := groupKeyText(k)
	for i, s := range l.text {
		if s == t {
			return i
		}
	}
	l.keys = append(l.keys, k)
	l.text = append(l.text, t)
	return len(l.keys) - 1
}

func groupKeyText(k groupKey) string {
	switch {
	case k.isPos:
		return "#" + ir.Int(k.pos).Text()
	case k.expr != nil:
		return "e:" + ir.FormatExpr(k.expr)
	}
	return "c:" + ir.FormatExpr(k.col)
}

// cross is the grouping sets of two GROUP BY items written side by side:
// every set of a joined with every set of b (SQL's cartesian product of
// grouping-set lists).
func cross(a, b setList) (setList, error) {
	if len(a)*len(b) > maxGroupingSets {
		return nil, tooManySets()
	}
	out := make(setList, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, append(append([]int(nil), x...), y...))
		}
	}
	return out, nil
}

func tooManySets() error {
	return notAgg("this GROUP BY expands to more than %d grouping sets; split the query", maxGroupingSets)
}

// rollupSets is ROLLUP(e1, ..., en) over items that each stand for one
// set: the prefixes, longest first, down to the grand total ().
func rollupSets(items [][]int) setList {
	out := make(setList, 0, len(items)+1)
	for n := len(items); n >= 0; n-- {
		var s []int
		for _, it := range items[:n] {
			s = append(s, it...)
		}
		out = append(out, s)
	}
	return out
}

// cubeSets is CUBE(e1, ..., en): every subset, the full one first and ()
// last.
func cubeSets(items [][]int) (setList, error) {
	if len(items) > 8 {
		return nil, tooManySets()
	}
	n := len(items)
	out := make(setList, 0, 1<<n)
	for mask := 1<<n - 1; mask >= 0; mask-- {
		var s []int
		for i, it := range items {
			if mask&(1<<(n-1-i)) != 0 {
				s = append(s, it...)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// normalizeSets sorts each set's keys, drops repeats inside a set, and
// with distinct (GROUP BY DISTINCT) drops repeated sets. A repeated set
// is otherwise kept: SQL returns its rows twice.
func normalizeSets(sets setList, distinct bool) [][]int {
	out := make([][]int, 0, len(sets))
	seen := map[string]bool{}
	for _, s := range sets {
		m := map[int]bool{}
		var n []int
		for _, k := range s {
			if !m[k] {
				m[k] = true
				n = append(n, k)
			}
		}
		sortInts(n)
		if n == nil {
			n = []int{}
		}
		id := setID(n)
		if distinct && seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, n)
	}
	return out
}

func setID(s []int) string {
	var b strings.Builder
	for _, k := range s {
		b.WriteString(ir.Int(int64(k)).Text())
		b.WriteByte(',')
	}
	return b.String()
}

func sortInts(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// pgGroupClause reads a PostgreSQL GROUP BY clause: its distinct keys and,
// when it uses ROLLUP, CUBE or GROUPING SETS, the expanded grouping sets
// (nil for a plain list of keys).
func pgGroupClause(items []*pg.Node, distinct bool) ([]groupKey, [][]int, error) {
	var l keyList
	// The keys before the first ROLLUP, CUBE or GROUPING SETS are one
	// set, the crossing of their one-key sets; the crossing starts from
	// it at the first of those (a plain list never needs it).
	var plain []int
	var sets setList
	hasSets := false
	for _, n := range items {
		var s setList
		var err error
		if g := n.GetGroupingSet(); g != nil {
			s, err = pgGroupingSet(g, &l)
			if err == nil && !hasSets {
				hasSets, sets = true, setList{plain}
			}
		} else {
			var i int
			if i, err = pgKeyIndex(n, &l); err == nil {
				if !hasSets {
					plain = append(plain, i)
					continue
				}
				s = setList{{i}}
			}
		}
		if err != nil {
			return nil, nil, err
		}
		if sets, err = cross(sets, s); err != nil {
			return nil, nil, err
		}
	}
	if !hasSets {
		if distinct {
			return nil, nil, notAgg("GROUP BY DISTINCT is not supported without ROLLUP, CUBE or GROUPING SETS")
		}
		return l.keys, nil, nil
	}
	return l.keys, normalizeSets(sets, distinct), nil
}

// pgKeySet reads one element of ROLLUP, CUBE or GROUPING SETS that stands
// for one set: a key, or a parenthesised list of keys, which PostgreSQL's
// grammar reads as a row expression there.
func pgKeySet(n *pg.Node, l *keyList) ([]int, bool, error) {
	if r := n.GetRowExpr(); r != nil {
		var s []int
		for _, a := range r.Args {
			i, err := pgKeyIndex(a, l)
			if err != nil {
				return nil, true, err
			}
			s = append(s, i)
		}
		return s, true, nil
	}
	if n.GetGroupingSet() != nil {
		return nil, false, nil
	}
	i, err := pgKeyIndex(n, l)
	return []int{i}, true, err
}

func pgKeyIndex(n *pg.Node, l *keyList) (int, error) {
	k, err := pgGroupKey(n)
	if err != nil {
		return 0, err
	}
	return l.add(k), nil
}

// pgGroupingSet expands one ROLLUP, CUBE, GROUPING SETS, () or
// parenthesised key list.
func pgGroupingSet(g *pg.GroupingSet, l *keyList) (setList, error) {
	switch g.Kind {
	case pg.GroupingSetKind_GROUPING_SET_EMPTY:
		return setList{{}}, nil
	case pg.GroupingSetKind_GROUPING_SET_SIMPLE:
		var s []int
		for _, n := range g.Content {
			i, err := pgKeyIndex(n, l)
			if err != nil {
				return nil, err
			}
			s = append(s, i)
		}
		return setList{s}, nil
	case pg.GroupingSetKind_GROUPING_SET_ROLLUP, pg.GroupingSetKind_GROUPING_SET_CUBE:
		// Each element is a key or a parenthesised list of keys, which
		// rolls up as a unit.
		var elems [][]int
		for _, n := range g.Content {
			if sub := n.GetGroupingSet(); sub != nil {
				if sub.Kind != pg.GroupingSetKind_GROUPING_SET_SIMPLE {
					return nil, notAgg("ROLLUP and CUBE take keys or parenthesised lists of keys")
				}
				s, err := pgGroupingSet(sub, l)
				if err != nil {
					return nil, err
				}
				elems = append(elems, s[0])
				continue
			}
			s, _, err := pgKeySet(n, l)
			if err != nil {
				return nil, err
			}
			elems = append(elems, s)
		}
		if g.Kind == pg.GroupingSetKind_GROUPING_SET_ROLLUP {
			return rollupSets(elems), nil
		}
		return cubeSets(elems)
	case pg.GroupingSetKind_GROUPING_SET_SETS:
		var out setList
		for _, n := range g.Content {
			var s setList
			var err error
			if sub := n.GetGroupingSet(); sub != nil {
				s, err = pgGroupingSet(sub, l)
			} else {
				var one []int
				if one, _, err = pgKeySet(n, l); err == nil {
					s = setList{one}
				}
			}
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
			if len(out) > maxGroupingSets {
				return nil, tooManySets()
			}
		}
		return out, nil
	}
	return nil, notAgg(msgGroupingSet)
}

// rollupKeys is MySQL's GROUP BY k1, ..., kn WITH ROLLUP: the prefixes.
func rollupKeys(n int) [][]int {
	items := make([][]int, n)
	for i := range items {
		items[i] = []int{i}
	}
	return normalizeSets(rollupSets(items), false)
}

// resolveGrouping binds the GROUPING(...) calls of the select list, HAVING
// and ORDER BY to the GROUP BY entries their arguments name (by the same
// rules as a selected column is matched to a key: the text as written,
// a column with or without its qualifier).
func (b queryBuilder) resolveGrouping(q *ir.Query) error {
	bind := func(e ir.Expr) (ir.Expr, error) {
		return ir.Rewrite(e, func(n ir.Expr) (ir.Expr, error) {
			g, ok := n.(ir.Grouping)
			if !ok {
				return n, nil
			}
			if len(g.Args) == 0 || len(g.Args) > 31 {
				return nil, notAgg("GROUPING takes 1 to 31 arguments")
			}
			g.Keys = make([]int, len(g.Args))
			for i, a := range g.Args {
				k := b.keyOf(q.GroupBy, a)
				if k < 0 {
					return nil, notAgg(msgGroupingArg)
				}
				g.Keys[i] = k
			}
			return g, nil
		})
	}
	var err error
	for i := range q.Select {
		if q.Select[i].Expr != nil {
			if q.Select[i].Expr, err = bind(q.Select[i].Expr); err != nil {
				return err
			}
		}
	}
	if q.Having, err = bind(q.Having); err != nil {
		return err
	}
	for i := range q.OrderBy {
		if q.OrderBy[i].Expr, err = bind(q.OrderBy[i].Expr); err != nil {
			return err
		}
	}
	return nil
}

// keyOf is the index of the GROUP BY entry e names, or -1.
func (b queryBuilder) keyOf(keys []ir.Expr, e ir.Expr) int {
	if c, ok := e.(ir.ColumnRef); ok {
		for i, k := range keys {
			if kc, ok := k.(ir.ColumnRef); ok && b.sameColumn(c, kc) {
				return i
			}
		}
	}
	t := b.keyText(e)
	for i, k := range keys {
		if b.keyText(k) == t {
			return i
		}
	}
	return -1
}

// pgGroupingFunc converts GROUPING(args) (select list, HAVING, ORDER BY
// only); its arguments are bound to keys by resolveGrouping.
func pgGroupingFunc(g *pg.GroupingFunc, aggs bool) (ir.Expr, error) {
	if !aggs {
		return nil, notAgg("GROUPING is allowed only in the select list, HAVING and ORDER BY")
	}
	args, err := pgExprs(g.Args, false)
	if err != nil {
		return nil, err
	}
	return ir.Grouping{Args: args}, nil
}

// groupingSets finishes the GROUP BY of a query with grouping sets (sets
// index the keys as read): keys that resolved to one expression (a
// position and the column it names, p.a and a) become one key, and the
// sets follow. It then binds GROUPING(...) calls, which any query may use.
func (b queryBuilder) groupingSets(q *ir.Query, sets [][]int) error {
	if sets != nil {
		var keys []ir.Expr
		index := make([]int, len(q.GroupBy))
		for i, k := range q.GroupBy {
			j := b.keyOf(keys, k)
			if j < 0 {
				j = len(keys)
				keys = append(keys, k)
			}
			index[i] = j
		}
		remapped := make(setList, len(sets))
		for i, s := range sets {
			remapped[i] = make([]int, len(s))
			for j, k := range s {
				remapped[i][j] = index[k]
			}
		}
		q.GroupBy = keys
		q.GroupingSets = normalizeSets(remapped, false)
	}
	return b.resolveGrouping(q)
}
