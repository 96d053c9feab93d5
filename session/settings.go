package session

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ddp-proxy/ddp-proxy/ir"
	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// ServerVersion is what clients are told they talk to. Clients parse it
// (pgjdbc, SQLAlchemy pick features by version), so it must look like a
// PostgreSQL version.
const ServerVersion = "15.0"

// ServerVersionNum is ServerVersion as current_setting('server_version_num')
// reports it (Grafana reads it to pick its SQL).
const ServerVersionNum = "150000"

// defaultSettings are the settings a session starts with; the PostgreSQL
// front end reports the first group as ParameterStatus.
func defaultSettings(user string) map[string]string {
	return map[string]string{
		"server_version":                ServerVersion,
		"server_version_num":            ServerVersionNum,
		"server_encoding":               "UTF8",
		"client_encoding":               "UTF8",
		"datestyle":                     "ISO, MDY",
		"integer_datetimes":             "on",
		"standard_conforming_strings":   "on",
		"timezone":                      "UTC",
		"application_name":              "",
		"is_superuser":                  "off",
		"intervalstyle":                 "postgres",
		"session_authorization":         user,
		"search_path":                   `"$user", public`,
		"extra_float_digits":            "1",
		"transaction_isolation":         "read committed",
		"default_transaction_read_only": "on",
		"max_identifier_length":         "63",
		"client_min_messages":           "notice",
		"statement_timeout":             "0",
	}
}

// messageLevels are client_min_messages' values, least severe first, as
// PostgreSQL orders them for this setting; "debug" is debug2's alias.
var messageLevels = []string{"debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"}

// messageLevel returns v's rank in messageLevels and its canonical
// spelling, or an error naming the values PostgreSQL accepts.
func messageLevel(v string) (int, string, error) {
	l := strings.ToLower(strings.Trim(v, "'\" "))
	if l == "debug" {
		l = "debug2"
	}
	for i, m := range messageLevels {
		if m == l {
			return i, m, nil
		}
	}
	return 0, "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"client_min_messages\": %q", v).
		WithHint("Available values: %s.", strings.Join(messageLevels, ", "))
}

// noticeLevel is messageLevels' index of NOTICE, the severity of the cost
// notice after each private answer.
const noticeLevel = 6

// wantsNotices reports whether the client asked for NOTICE messages
// (client_min_messages at notice or below, the default). A client that
// raised it (SET client_min_messages = warning, or the startup option
// -c client_min_messages=warning) gets no cost notice, as PostgreSQL
// sends it no NOTICE; SHOW ddp.budget still says what is left.
func (s *Session) wantsNotices() bool {
	// SET and the startup settings store the canonical spelling; unset
	// (Index -1) is PostgreSQL's default, notice.
	return slices.Index(messageLevels, s.settings["client_min_messages"]) <= noticeLevel
}

// reportedSettings are sent to PostgreSQL clients at startup, under
// their canonical spelling.
var reportedSettings = map[string]string{
	"server_version": "server_version", "server_encoding": "server_encoding", "client_encoding": "client_encoding",
	"datestyle": "DateStyle", "integer_datetimes": "integer_datetimes", "standard_conforming_strings": "standard_conforming_strings",
	"timezone": "TimeZone", "application_name": "application_name", "is_superuser": "is_superuser",
	"intervalstyle": "IntervalStyle", "session_authorization": "session_authorization",
}

// ParameterStatus returns the settings reported at startup.
func (s *Session) ParameterStatus() map[string]string {
	out := make(map[string]string, len(reportedSettings))
	for k, name := range reportedSettings {
		out[name] = s.settings[k]
	}
	return out
}

// readOnlySettings cannot be changed by a client.
var readOnlySettings = map[string]bool{
	"server_version": true, "server_version_num": true, "server_encoding": true, "integer_datetimes": true, "is_superuser": true,
	"session_authorization": true, "role": true, "max_identifier_length": true,
}

// sessionStatement answers SET, RESET, SHOW, BEGIN, COMMIT... locally:
// nothing is forwarded, so a client can never change the backend session
// (its role, its read-only mode, its search path).
func (s *Session) sessionStatement(ctx context.Context, ss *ir.Session) (Result, error) {
	switch ss.Verb {
	case ir.SessionBegin:
		s.inTx = true
		return Result{Tag: "BEGIN"}, nil
	case ir.SessionCommit:
		s.inTx = false
		return Result{Tag: "COMMIT"}, nil
	case ir.SessionRollback:
		s.inTx = false
		return Result{Tag: "ROLLBACK"}, nil
	case ir.SessionSet:
		for _, st := range ss.Settings {
			if err := s.setScoped(st); err != nil {
				return Result{}, err
			}
		}
		return Result{Tag: "SET"}, nil
	case ir.SessionReset:
		for _, st := range ss.Settings {
			if err := s.setScoped(ir.Setting{Name: st.Name, Default: true}); err != nil {
				return Result{}, err
			}
		}
		return Result{Tag: "RESET"}, nil
	case ir.SessionShow:
		if len(ss.Settings) == 0 {
			return Result{}, sqlerr.New(sqlerr.SyntaxError, "SHOW needs a setting name")
		}
		return s.show(ctx, ss.Settings[0].Name)
	case ir.SessionUse:
		return Result{}, sqlerr.New(sqlerr.FeatureNotSupported, "USE is not supported: connect to the database you need")
	}
	return Result{Tag: otherTag(ss)}, nil
}

// localSetting is what SET LOCAL replaced, restored when the transaction
// ends.
type localSetting struct {
	value       string
	present     bool
	epsilon     float64
	stmtTimeout time.Duration
}

// setScoped applies a SET or RESET with PostgreSQL's scopes: SET LOCAL
// lasts until the transaction ends (COMMIT or ROLLBACK: endTransaction
// restores what it replaced; for the statements of one query string,
// PostgreSQL's implicit transaction block, the end of the string) and,
// outside a transaction block, does nothing (PostgreSQL warns and
// ignores it). A plain SET lasts for the session; made after a SET LOCAL
// of the same setting in the transaction, it is what the end of the
// transaction returns to. (A plain SET is not undone by ROLLBACK here,
// unlike PostgreSQL: the proxy's transactions are only markers.)
func (s *Session) setScoped(st ir.Setting) error {
	n := normalizeName(st.Name)
	if st.Scope == "local" {
		if !s.inTx && !s.implicitTx {
			return nil
		}
		if _, saved := s.local[n]; !saved {
			if s.local == nil {
				s.local = map[string]localSetting{}
			}
			s.local[n] = s.saveSetting(n)
		}
		return s.set(st.Name, st.Value, st.Default)
	}
	if err := s.set(st.Name, st.Value, st.Default); err != nil {
		return err
	}
	for k := range s.local {
		if k == n || n == "all" {
			s.local[k] = s.saveSetting(k)
		}
	}
	return nil
}

// saveSetting records setting n as it is now.
func (s *Session) saveSetting(n string) localSetting {
	v, ok := s.settings[n]
	return localSetting{value: v, present: ok, epsilon: s.epsilon, stmtTimeout: s.stmtTimeout}
}

// endLocalSettings restores what SET LOCAL replaced during the
// transaction that ends.
func (s *Session) endLocalSettings() {
	for n, v := range s.local {
		if v.present {
			s.settings[n] = v.value
		} else {
			delete(s.settings, n)
		}
		switch n {
		case "ddp.epsilon":
			s.epsilon = v.epsilon
		case "statement_timeout":
			s.stmtTimeout = v.stmtTimeout
		}
	}
	s.local = nil
}

// otherTag is PostgreSQL's command tag for a statement accepted without
// effect (SAVEPOINT, DISCARD ALL, ...), named from the parser's tree.
func otherTag(ss *ir.Session) string {
	if len(ss.Settings) == 0 {
		return "SET"
	}
	st := ss.Settings[0]
	switch st.Name {
	case "savepoint":
		return "SAVEPOINT"
	case "release savepoint":
		return "RELEASE"
	case "rollback to savepoint":
		return "ROLLBACK"
	case "discard":
		return "DISCARD " + strings.ToUpper(st.Value)
	case "deallocate":
		if st.Value == "all" {
			return "DEALLOCATE ALL"
		}
		return "DEALLOCATE"
	case "listen":
		return "LISTEN"
	case "unlisten":
		return "UNLISTEN"
	}
	return "SET" // SET TRANSACTION, SET SESSION CHARACTERISTICS
}

// normalizeName maps spellings onto one key.
func normalizeName(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "time zone", "time_zone":
		return "timezone"
	case "names":
		return "client_encoding"
	}
	return n
}

func (s *Session) set(name, value string, toDefault bool) error {
	n := normalizeName(name)
	switch n {
	case "ddp.epsilon":
		if toDefault {
			s.epsilon = 0
			return nil
		}
		return s.setEpsilon(value)
	case "all":
		if toDefault {
			s.epsilon, s.stmtTimeout = 0, 0
			for k, v := range defaultSettings(s.user.Name) {
				s.settings[k] = v
			}
			return nil
		}
	case "ddp.budget":
		return sqlerr.New(sqlerr.InsufficientPrivilege, "ddp.budget is read-only: the DBA sets budgets in the policy")
	case "statement_timeout":
		return s.setStatementTimeout(value, toDefault)
	}
	if readOnlySettings[n] {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "parameter %q cannot be changed through the privacy proxy", name)
	}
	if n == "client_min_messages" && !toDefault {
		_, v, err := messageLevel(value)
		if err != nil {
			return err
		}
		value = v
	}
	if n == "client_encoding" && !toDefault {
		v := strings.ToUpper(strings.Trim(value, "'\" "))
		if v != "UTF8" && v != "UTF-8" && v != "UNICODE" {
			return sqlerr.New(sqlerr.FeatureNotSupported, "client_encoding %s is not supported; use UTF8", value)
		}
		value = "UTF8"
	}
	if n == "datestyle" && !toDefault {
		v, err := dateStyle(value, s.settings["datestyle"])
		if err != nil {
			return err
		}
		value = v
	}
	if toDefault {
		if v, ok := defaultSettings(s.user.Name)[n]; ok {
			s.settings[n] = v
		} else {
			delete(s.settings, n)
		}
		return nil
	}
	s.settings[n] = strings.Trim(value, "'")
	return nil
}

func (s *Session) show(ctx context.Context, name string) (Result, error) {
	n := normalizeName(name)
	switch n {
	case "ddp.budget":
		return s.budgetView(ctx)
	case "ddp.epsilon":
		return oneValue(name, strconv.FormatFloat(s.currentEpsilon(), 'g', -1, 64)), nil
	case "all":
		keys := make([]string, 0, len(s.settings))
		for k := range s.settings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		r := Result{Columns: []Column{{Name: "name", Type: TypeText}, {Name: "setting", Type: TypeText}}, Tag: "SHOW"}
		r.Rows = append(r.Rows, []ir.Value{ir.String("ddp.epsilon"), ir.String(strconv.FormatFloat(s.currentEpsilon(), 'g', -1, 64))})
		for _, k := range keys {
			r.Rows = append(r.Rows, []ir.Value{ir.String(k), ir.String(s.settings[k])})
		}
		return r, nil
	}
	v, ok := s.settings[n]
	if !ok {
		return Result{}, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	return oneValue(name, v), nil
}

func oneValue(name, v string) Result {
	return Result{Columns: []Column{{Name: strings.ToLower(name), Type: TypeText}}, Rows: [][]ir.Value{{ir.String(v)}}, Tag: "SHOW"}
}

// dateStyle is the DateStyle that SET DateStyle = value makes of current:
// the output style stays ISO, the only one the proxy writes (dates and
// times are YYYY-MM-DD and YYYY-MM-DD HH:MM:SS in every answer), and the
// field order (MDY, DMY, YMD, or their aliases) is kept as PostgreSQL keeps
// it. Another output style (SQL, Postgres, German) is refused rather than
// shown by SHOW while ignored: a client that asked for 02/01/2010 would
// read 2010-01-02.
func dateStyle(value, current string) (string, error) {
	order := "MDY"
	if _, o, ok := strings.Cut(current, ", "); ok {
		order = o
	}
	for _, tok := range strings.Split(strings.Trim(value, "'\" "), ",") {
		switch t := strings.ToUpper(strings.TrimSpace(tok)); t {
		case "ISO":
		case "MDY", "DMY", "YMD":
			order = t
		case "US", "NONEURO", "NONEUROPEAN":
			order = "MDY"
		case "EURO", "EUROPEAN":
			order = "DMY"
		case "SQL", "POSTGRES", "GERMAN":
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "DateStyle %s is not supported: dates are written in the ISO style here (2010-01-02)", t).
				WithHint("SET DateStyle = 'ISO, %s'", order)
		default:
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"DateStyle\": %q", value).
				WithHint("use ISO with MDY, DMY or YMD, e.g. SET DateStyle = 'ISO, DMY'")
		}
	}
	return "ISO, " + order, nil
}
