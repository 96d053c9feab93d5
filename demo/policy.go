package demo

import (
	"bytes"
	_ "embed"
	"fmt"
	"maps"
	"net"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// policyText is the commented policy; policy.go fills in the file names
// and the constants of the generator, so the policy and the data cannot
// drift apart.
//
//go:embed policy.yaml.tmpl
var policyText string

// analystSCRAM is the PostgreSQL SCRAM-SHA-256 verifier of the password
// "demo" (RFC 5802/7677: PBKDF2-HMAC-SHA-256 with 4096 iterations and the
// salt "ddp-proxy-demo-salt!", StoredKey = SHA-256(HMAC(salted, "Client
// Key")), ServerKey = HMAC(salted, "Server Key")). The tests check it
// against an independent SCRAM implementation.
const analystSCRAM = "SCRAM-SHA-256$4096:ZGRwLXByb3h5LWRlbW8tc2FsdCE=$qAPd8V/SnKFcyDDCKp0IQLTsCwRJ/RRL6UQFwfbZ4M4=:NohECoZRG0EHMADxICmNaj7uHHXk9KtR7jVNv8Y7IE8="

// Demo login. With listen.auth trust any password is accepted; the
// verifier above is of DemoPassword.
const (
	DemoUser     = "analyst"
	DemoPassword = "demo"
)

// check refuses addresses the policy could not name as they are: not
// host:port, or with characters a YAML double-quoted string would read
// differently (a host name or IP address has none of them).
func (l Listen) check() error {
	for _, a := range []struct{ name, addr string }{{"postgres", l.Postgres}, {"mysql", l.MySQL}} {
		if a.name == "mysql" && a.addr == "off" {
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return fmt.Errorf("demo %s address %q: %w", a.name, a.addr, err)
		}
		if i := strings.IndexFunc(a.addr, func(r rune) bool { return r < ' ' || r == '"' || r == '\\' || r > '~' }); i >= 0 {
			return fmt.Errorf("demo %s address %q: unexpected character %q", a.name, a.addr, a.addr[i])
		}
	}
	return nil
}

// yamlAddr writes an address check accepted as a YAML scalar: plain, as
// people write it, unless YAML would read it as something else ("off" is
// a boolean, "[::1]:5432" starts a sequence).
func yamlAddr(a string) string {
	if a == "off" || strings.HasPrefix(a, "[") {
		return `"` + a + `"`
	}
	return a
}

// renderPolicy returns the policy file's text, listening on l.
func renderPolicy(l Listen) ([]byte, error) {
	tmpl, err := template.New("policy").Option("missingkey=error").Parse(policyText)
	if err != nil {
		return nil, err
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	var buf bytes.Buffer
	start, end := checkinPeriod()
	data := map[string]string{
		// Check-in times are whole seconds in [start, end).
		"CheckinStart": start.Format(timeLayout),
		"CheckinEnd":   end.Add(-time.Second).Format(timeLayout),
		"Database":     DatabaseFile,
		"Ledger":       LedgerFile,
		"SCRAM":        analystSCRAM,
		"Users":        strconv.Itoa(numUsers),
		"MaxCheckins":  strconv.Itoa(maxCheckins),
		"LastCell":     strconv.Itoa(numCells - 1),
		"LatMin":       num(latMin),
		"LatMax":       num(latMax),
		"LonMin":       num(lonMin),
		"LonMax":       num(lonMax),
		"MySQL":        l.MySQL,
		"PostgresYAML": yamlAddr(l.Postgres),
		"MySQLYAML":    yamlAddr(l.MySQL),
	}
	// For the comments showing the client command lines (check has
	// vetted both addresses).
	data["PostgresHost"], data["PostgresPort"], _ = net.SplitHostPort(l.Postgres)
	data["MySQLHost"], data["MySQLPort"], _ = net.SplitHostPort(l.MySQL)
	maps.Copy(data, ddpTemplateData())
	err = tmpl.Execute(&buf, data)
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writePolicy writes the policy file, replacing an old one.
func writePolicy(path string, l Listen) error {
	data, err := renderPolicy(l)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
