package policies

import (
	"strconv"
	"strings"
)

// Problem is one thing wrong with a policy file.
type Problem struct {
	// File is the policy file ("" when unknown).
	File string
	// Line is the 1-based line of the offending key (0 when unknown).
	Line int
	// Path is the dotted path of the offending field.
	Path string
	// Message says what is wrong and what to change; it starts with Path.
	Message string
}

// Position renders "file:line", "file", "line N" or "" as far as known.
func (p Problem) Position() string {
	switch {
	case p.File != "" && p.Line > 0:
		return p.File + ":" + strconv.Itoa(p.Line)
	case p.File != "":
		return p.File
	case p.Line > 0:
		return "line " + strconv.Itoa(p.Line)
	}
	return ""
}

func (p Problem) Error() string {
	if pos := p.Position(); pos != "" {
		return pos + ": " + p.Message
	}
	return p.Message
}

// Problems is every problem found in a policy. It is the error returned by
// Load and Validate, so a DBA sees all of them in one run instead of fixing
// them one at a time.
type Problems []Problem

// Error prints one problem per line as "file:line: message".
func (ps Problems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

// err returns ps as an error, or a true nil when there are none (a nil
// Problems stored in an error interface would not compare equal to nil).
func (ps Problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}
