package session

import (
	"regexp"
	"strings"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// localItem matches one select-list item the proxy can answer itself:
// a session-information function with an optional alias.
var localItem = regexp.MustCompile(`^(?i)(?:pg_catalog\.)?(version|current_database|current_schema|current_user|session_user|current_catalog|user)\s*(\(\s*\))?(?:\s+(?:as\s+)?("?[a-z_][a-z0-9_]*"?))?$`)

var localSelect = regexp.MustCompile(`^(?is)select\s+(.*?)\s*;?\s*$`)

// localAnswer answers SELECT version(), current_database() and friends
// when the backend cannot (a backend of another dialect): clients send
// them on connect. ok is false when the statement is not such a query.
func (s *Session) localAnswer(text string) (Result, bool) {
	m := localSelect.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return Result{}, false
	}
	var r Result
	var row []ir.Value
	for _, item := range strings.Split(m[1], ",") {
		im := localItem.FindStringSubmatch(strings.TrimSpace(item))
		if im == nil {
			return Result{}, false
		}
		fn := strings.ToLower(im[1])
		name := fn
		if im[3] != "" {
			name = strings.Trim(im[3], `"`)
		}
		var v string
		switch fn {
		case "version":
			v = "PostgreSQL " + ServerVersion + " (ddp-proxy privacy proxy)"
		case "current_database", "current_catalog":
			v = s.settings["database"]
			if v == "" {
				v = "ddp"
			}
		case "current_schema":
			v = "public"
		default:
			v = s.user.Name
		}
		r.Columns = append(r.Columns, Column{Name: name, Type: TypeText})
		row = append(row, ir.String(v))
	}
	r.Rows = [][]ir.Value{row}
	r.Tag = "SELECT 1"
	return r, true
}
