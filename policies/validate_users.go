package policies

import (
	"encoding/base64"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"
)

func (p *Policy) checkUsers(c *checker) {
	seen := map[string]string{} // lower-case name -> path of the first user
	for i, u := range p.Users {
		up := p.userPath(i)
		if u == nil {
			c.add(up, "empty user entry; give at least name and a password")
			continue
		}
		switch lname := strings.ToLower(u.Name); {
		case strings.TrimSpace(u.Name) == "":
			c.add(up, "user has no name; add name: (the login name analysts connect with)")
		case seen[lname] != "":
			c.add(up+".name", "user %q is defined twice (also at %s); user names are case-insensitive, so merge the two entries", u.Name, p.Position(seen[lname]))
		default:
			seen[lname] = up
		}
		c.checkCredentials(up, u)
		c.checkEpsilons(up, u)
		c.checkBudgets(up, u)
	}
}

func (c *checker) checkCredentials(up string, u *User) {
	var set []string
	if u.PasswordEnv != "" {
		set = append(set, "password_env")
	}
	if u.SCRAMSHA256 != "" {
		set = append(set, "scram_sha_256")
	}
	if u.MySQLNativePassword != "" {
		set = append(set, "mysql_native_password")
	}
	switch len(set) {
	case 0:
		c.add(up, "user needs exactly one of password_env, scram_sha_256 or mysql_native_password; none is set")
	case 1:
	default:
		c.add(up+"."+set[1], "user needs exactly one of password_env, scram_sha_256 or mysql_native_password, not %s; remove all but one", strings.Join(set, " and "))
	}
	if u.SCRAMSHA256 != "" {
		if why := checkSCRAM(u.SCRAMSHA256); why != "" {
			c.add(up+".scram_sha_256", "not a PostgreSQL SCRAM-SHA-256 verifier (%s); copy rolpassword from pg_authid, of the form SCRAM-SHA-256$<iterations>:<salt base64>$<StoredKey base64>:<ServerKey base64>", why)
		}
	}
	if u.MySQLNativePassword != "" && !isMySQLNative(u.MySQLNativePassword) {
		c.add(up+".mysql_native_password", "not a mysql_native_password hash; write * followed by 40 hex digits (SHA1(SHA1(password)), the authentication_string of mysql.user)")
	}
}

// checkSCRAM checks the shape of a verifier; it never echoes the verifier
// itself into the reason, since it is password-equivalent for offline
// guessing.
func checkSCRAM(v string) string {
	rest, ok := strings.CutPrefix(v, "SCRAM-SHA-256$")
	if !ok {
		return "it must start with SCRAM-SHA-256$"
	}
	iterSalt, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return "missing $ between the salt and the keys"
	}
	iter, salt, ok := strings.Cut(iterSalt, ":")
	if !ok {
		return "missing : between the iteration count and the salt"
	}
	if n, err := strconv.Atoi(iter); err != nil || n < 1 {
		return "the iteration count is not a positive integer"
	}
	if b, err := base64.StdEncoding.DecodeString(salt); err != nil || len(b) == 0 {
		return "the salt is not base64"
	}
	stored, server, ok := strings.Cut(keys, ":")
	if !ok {
		return "missing : between StoredKey and ServerKey"
	}
	for _, k := range []struct{ name, v string }{{"StoredKey", stored}, {"ServerKey", server}} {
		b, err := base64.StdEncoding.DecodeString(k.v)
		if err != nil || len(b) != 32 {
			return k.name + " is not 32 bytes of base64"
		}
	}
	return ""
}

func isMySQLNative(v string) bool {
	h, ok := strings.CutPrefix(v, "*")
	if !ok || len(h) != 40 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

func (c *checker) checkEpsilons(up string, u *User) {
	okDefault, okMax := true, true
	if !finite(u.DefaultEpsilon) || u.DefaultEpsilon <= 0 {
		c.add(up+".default_epsilon", "default_epsilon must be a finite number > 0 (default 0.1), not %v", u.DefaultEpsilon)
		okDefault = false
	}
	if !finite(u.MaxEpsilon) || u.MaxEpsilon <= 0 {
		c.add(up+".max_epsilon", "max_epsilon must be a finite number > 0 (default 1), not %v", u.MaxEpsilon)
		okMax = false
	}
	if okDefault && okMax && u.DefaultEpsilon > u.MaxEpsilon {
		c.add(up+".default_epsilon", "default_epsilon %v is larger than max_epsilon %v, so a query with the default ε would be refused; lower default_epsilon or raise max_epsilon", u.DefaultEpsilon, u.MaxEpsilon)
	}
	if !finite(u.DeltaPerQuery) || u.DeltaPerQuery < 0 || u.DeltaPerQuery >= 1 {
		c.add(up+".delta_per_query", "delta_per_query must be in [0, 1) (0 forbids GROUP BY without a declared domain; typical is 1e-6), not %v", u.DeltaPerQuery)
	}
}

func (c *checker) checkBudgets(up string, u *User) {
	names := make([]string, 0, len(u.Budgets))
	for n := range u.Budgets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, dn := range names {
		b := u.Budgets[dn]
		bp := up + ".budgets." + dn
		if _, ok := c.p.Datasets[dn]; !ok {
			hint := "declare it under datasets or remove this budget"
			for _, known := range c.p.DatasetNames {
				if strings.EqualFold(known, dn) {
					hint = "dataset names are case-sensitive; did you mean " + strconv.Quote(known) + "?"
				}
			}
			c.add(bp, "budget for unknown dataset %q; %s", dn, hint)
		}
		if !finite(b.Epsilon) || b.Epsilon <= 0 {
			c.add(bp+".epsilon", "epsilon must be a finite number > 0 (the user's total ε on this dataset), not %v", b.Epsilon)
		}
		if !finite(b.Delta) || b.Delta < 0 || b.Delta >= 1 {
			c.add(bp+".delta", "delta must be in [0, 1) (typically 1e-6 or 0), not %v", b.Delta)
			continue
		}
		// δ = 0 simply means no threshold selection on this dataset; a δ below
		// delta_per_query could never be spent and is a mistake.
		if u.DeltaPerQuery > 0 && b.Delta > 0 && u.DeltaPerQuery > b.Delta {
			c.add(bp+".delta", "delta %v is smaller than the user's delta_per_query %v, so a query spending δ can never run on %s; raise delta to at least delta_per_query or set delta_per_query to 0", b.Delta, u.DeltaPerQuery, dn)
		}
	}
}
