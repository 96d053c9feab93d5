package parser

import (
	"reflect"
	"sort"
	"strings"
	"sync"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// A shape is a PostgreSQL text with its literal constants taken out
// (shape_lex.go). BI tools send the same statement with new filter values
// over and over, and every new value used to be a new text: a full
// libpg_query parse (C grammar, protobuf out, protobuf in) each time. For a
// shape whose tree has been checked, a new text's tree is the first
// text's tree with the constants' values and the locations after them
// changed, which is what shapeEntry builds without the grammar; the
// conversion to statements then runs as for a fresh parse.
//
// The check (newShapeEntry) is what makes this sound: every literal the
// lexer found must be exactly one A_Const of the tree, at the literal or
// at a "-" directly before it (the grammar folds a unary minus into the
// constant, doNegate), holding the literal's value; and every other
// A_Const must be at no location or at a keyword or identifier (NULL,
// TRUE, extract(year ...), interval '1' day's field mask: its value comes
// from that word, which is the same in every text of the shape). The
// grammar sees token types, not values, so a text of the same
// shape (same bytes around literals of the same types) goes through the
// same grammar rules; a rule that reads a literal's value for anything
// else (float(10) vs float(30), FETCH 5, SET x = +5) puts it somewhere
// other than an A_Const of its own, and the check refuses the shape. The
// oracle tests compare the trees, statements and fingerprints with fresh
// parses over the repository's corpora.
//
// Trees are patched in place and reused (shapeInst), one text at a time:
// this relies on the conversion (pgStatements) only reading the tree,
// which TestShapeConversionReadsOnly checks.

// shapeSlot is where one literal of the shape lives in the tree.
type shapeSlot struct {
	konst   int  // index of the A_Const in walk order
	negated bool // the grammar folded a "-" in: the value is negated
}

type shapeEntry struct {
	key string
	ok  bool // false: the shape failed the check (or did not parse); parse texts normally

	tmpl     *pg.ParseResult // never modified; instances are clones of it
	lits     []pgLiteral     // the template text's literals (spans)
	slots    []shapeSlot     // per literal
	origLocs []int32         // per location field, in walk order
	origRaws [][2]int32      // per RawStmt: stmt_location, stmt_len

	mu   sync.Mutex
	free []*shapeInst // instances not in use, at most maxShapeInstances

	fp string // the fingerprint of every text of the shape, once known (Cache.mu)
}

// maxShapeInstances bounds the trees kept per shape for reuse: enough for
// the parsers running at once on a small machine, and a shape's memory is
// a few times its tree's.
const maxShapeInstances = 2

// shapeInst is one clone of the template, patched for one text at a time.
type shapeInst struct {
	res    *pg.ParseResult
	consts []*pg.A_Const // per slot
	locs   []*int32
	raws   []*pg.RawStmt
}

// newShapeEntry checks the tree of sql against its literals. The result
// has ok=false when a literal is not exactly one A_Const holding its
// value, or another A_Const is not at a word.
func newShapeEntry(key, sql string, res *pg.ParseResult, lits []pgLiteral) *shapeEntry {
	e := &shapeEntry{key: key}
	refs := collectTreeRefs(res)
	byLoc := map[int32][]int{}
	for k, c := range refs.consts {
		byLoc[c.Location] = append(byLoc[c.Location], k)
	}
	used := make([]bool, len(refs.consts))
	slots := make([]shapeSlot, len(lits))
	for i, l := range lits {
		var found []shapeSlot
		for _, k := range byLoc[int32(l.start)] {
			if constHolds(refs.consts[k], l, false) {
				found = append(found, shapeSlot{konst: k})
			}
		}
		if l.minus >= 0 {
			for _, k := range byLoc[int32(l.minus)] {
				if constHolds(refs.consts[k], l, true) {
					found = append(found, shapeSlot{konst: k, negated: true})
				}
			}
		}
		if len(found) != 1 || used[found[0].konst] {
			return e
		}
		used[found[0].konst] = true
		slots[i] = found[0]
	}
	for k, c := range refs.consts {
		if !used[k] && !atWord(sql, c.Location) {
			return e
		}
	}
	e.ok = true
	e.tmpl = proto.Clone(res).(*pg.ParseResult)
	e.lits = lits
	e.slots = slots
	e.origLocs = make([]int32, len(refs.locs))
	for i, p := range refs.locs {
		e.origLocs[i] = *p
	}
	e.origRaws = make([][2]int32, len(refs.raws))
	for i, r := range refs.raws {
		e.origRaws[i] = [2]int32{r.StmtLocation, r.StmtLen}
	}
	return e
}

// atWord reports whether loc is nowhere (-1) or the start of a keyword or
// unquoted identifier of sql. The grammar puts a constant made from a
// literal at the literal or at its sign, never at a word.
func atWord(sql string, loc int32) bool {
	if loc == -1 {
		return true
	}
	i := int(loc)
	return i >= 0 && i < len(sql) && isIdentStart(sql[i]) && (i == 0 || !isIdentCont(sql[i-1]))
}

// constHolds reports whether c is the constant the grammar makes of l
// (negated: of "-" l, doNegate in gram.y).
func constHolds(c *pg.A_Const, l pgLiteral, negated bool) bool {
	if c.Isnull {
		return false
	}
	switch v := c.Val.(type) {
	case *pg.A_Const_Ival:
		return l.class == litInt && v.Ival != nil && v.Ival.Ival == negInt(l.ival, negated)
	case *pg.A_Const_Fval:
		return l.class == litFloat && v.Fval != nil && v.Fval.Fval == negFloat(l.text, negated)
	case *pg.A_Const_Sval:
		return l.class == litString && !negated && v.Sval != nil && v.Sval.Sval == l.text
	}
	return false
}

func negInt(v int32, negated bool) int32 {
	if negated {
		return -v // v ≥ 0 (the scanner's ICONST), so this never overflows
	}
	return v
}

// negFloat is doNegateFloat for a token of digits (no sign of its own).
func negFloat(s string, negated bool) string {
	if negated {
		return "-" + s
	}
	return s
}

// tree returns the tree of text (whose literals are lits, of this shape)
// in an instance that the caller gives back with put once done with it.
func (e *shapeEntry) tree(lits []pgLiteral) *shapeInst {
	e.mu.Lock()
	var in *shapeInst
	if n := len(e.free); n > 0 {
		in, e.free = e.free[n-1], e.free[:n-1]
	}
	e.mu.Unlock()
	if in == nil {
		res := proto.Clone(e.tmpl).(*pg.ParseResult)
		refs := collectTreeRefs(res)
		in = &shapeInst{res: res, locs: refs.locs, raws: refs.raws, consts: make([]*pg.A_Const, len(e.slots))}
		for i, s := range e.slots {
			in.consts[i] = refs.consts[s.konst]
		}
	}
	for i, s := range e.slots {
		l, c := lits[i], in.consts[i]
		switch l.class {
		case litInt:
			c.Val.(*pg.A_Const_Ival).Ival.Ival = negInt(l.ival, s.negated)
		case litFloat:
			c.Val.(*pg.A_Const_Fval).Fval.Fval = negFloat(l.text, s.negated)
		case litString:
			c.Val.(*pg.A_Const_Sval).Sval.Sval = l.text
		}
	}
	shift := newShifter(e.lits, lits)
	for i, p := range in.locs {
		*p = shift.at(e.origLocs[i])
	}
	for i, r := range in.raws {
		loc, n := e.origRaws[i][0], e.origRaws[i][1]
		r.StmtLocation = shift.at(loc)
		if n > 0 { // 0 means "to the end of the text"
			r.StmtLen = shift.at(loc+n) - r.StmtLocation
		}
	}
	return in
}

func (e *shapeEntry) put(in *shapeInst) {
	e.mu.Lock()
	if len(e.free) < maxShapeInstances {
		e.free = append(e.free, in)
	}
	e.mu.Unlock()
}

// shifter maps an offset in the template text to the same place in a text
// of the same shape: literals before it may have changed length.
type shifter struct {
	ends  []int32 // template literal ends, ascending
	delta []int32 // cumulative length change up to and including literal i
}

func newShifter(old, cur []pgLiteral) shifter {
	s := shifter{ends: make([]int32, len(old)), delta: make([]int32, len(old))}
	d := int32(0)
	for i := range old {
		d += int32((cur[i].end - cur[i].start) - (old[i].end - old[i].start))
		s.ends[i], s.delta[i] = int32(old[i].end), d
	}
	return s
}

func (s shifter) at(p int32) int32 {
	if p < 0 {
		return p // -1: no location
	}
	// Literals that end at or before p moved it; a literal starting at p
	// (the constant's own location) did not.
	i := sort.Search(len(s.ends), func(i int) bool { return s.ends[i] > p })
	if i == 0 {
		return p
	}
	return p + s.delta[i-1]
}

// treeRefs are the parts of a tree a shape patches, in a fixed walk order
// (Go struct field order), so that a clone's refs line up with the
// template's.
type treeRefs struct {
	consts []*pg.A_Const
	locs   []*int32 // every int32 field whose name ends in Location, except RawStmt's
	raws   []*pg.RawStmt
}

func collectTreeRefs(res *pg.ParseResult) treeRefs {
	var r treeRefs
	r.walk(reflect.ValueOf(res))
	return r
}

// treePlan lists, for one generated message (or oneof wrapper) struct
// type, the fields the walk reads.
type treePlan struct {
	locs []int // int32 *Location fields
	kids []int // pointer, slice and oneof fields (messages below)
}

// The plans are derived from the generated types only, so one set serves
// every cache.
var (
	treePlans   sync.Map // reflect.Type → *treePlan
	aConstType  = reflect.TypeFor[pg.A_Const]()
	rawStmtType = reflect.TypeFor[pg.RawStmt]()
)

func planFor(t reflect.Type) *treePlan {
	if p, ok := treePlans.Load(t); ok {
		return p.(*treePlan)
	}
	p := &treePlan{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue // protobuf's state, sizeCache, unknownFields
		}
		switch f.Type.Kind() {
		case reflect.Int32:
			if strings.HasSuffix(f.Name, "Location") && t != rawStmtType {
				p.locs = append(p.locs, i)
			}
		case reflect.Pointer, reflect.Slice, reflect.Interface:
			p.kids = append(p.kids, i)
		}
	}
	treePlans.Store(t, p)
	return p
}

// walk visits a pointer to a message or oneof wrapper struct.
func (r *treeRefs) walk(v reflect.Value) {
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Kind() != reflect.Struct {
		return
	}
	s := v.Elem()
	switch s.Type() {
	case aConstType:
		r.consts = append(r.consts, (*pg.A_Const)(v.UnsafePointer()))
	case rawStmtType:
		r.raws = append(r.raws, (*pg.RawStmt)(v.UnsafePointer()))
	}
	p := planFor(s.Type())
	for _, i := range p.locs {
		r.locs = append(r.locs, (*int32)(s.Field(i).Addr().UnsafePointer()))
	}
	for _, i := range p.kids {
		f := s.Field(i)
		switch f.Kind() {
		case reflect.Pointer:
			r.walk(f)
		case reflect.Slice:
			for j := range f.Len() {
				r.walk(f.Index(j))
			}
		case reflect.Interface:
			if !f.IsNil() {
				r.walk(f.Elem())
			}
		}
	}
}
