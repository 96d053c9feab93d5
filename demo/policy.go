package demo

import (
	"bytes"
	_ "embed"
	"maps"
	"os"
	"strconv"
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

// renderPolicy returns the policy file's text.
func renderPolicy() ([]byte, error) {
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
	}
	maps.Copy(data, ddpTemplateData())
	err = tmpl.Execute(&buf, data)
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writePolicy writes the policy file, replacing an old one.
func writePolicy(path string) error {
	data, err := renderPolicy()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
