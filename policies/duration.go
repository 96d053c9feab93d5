package policies

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// UnmarshalYAML reads a Go duration string such as "30s" or "2m30s". A bare
// number is refused: "30" could mean seconds or milliseconds, and guessing
// wrong makes every query time out or none.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return typeError(n, "expected a duration such as 30s or 2m")
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return typeError(n, fmt.Sprintf("%q is not a duration; write it with a unit, e.g. 30s or 2m", n.Value))
	}
	d.Duration = v
	return nil
}

// MarshalYAML writes the duration back in the form UnmarshalYAML reads.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// typeError reports a decoding problem the way yaml.v3 collects them: as a
// *yaml.TypeError with a "line N: " prefix, so decoding goes on and the
// loader reports it with the others. Any other error type would abort the
// whole decode without a line number.
func typeError(n *yaml.Node, msg string) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, msg)}}
}
