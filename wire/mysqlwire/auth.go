package mysqlwire

import (
	"bytes"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/x509"
	"net"

	"github.com/dolthub/vitess/go/mysql"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// authServer checks passwords against Handler.LookupUser. It offers
// mysql_native_password first (every client speaks it, no TLS needed)
// and caching_sha2_password (MySQL 8 clients' default).
//
// caching_sha2_password's fast path needs SHA256(password), which the
// proxy has only for users with a cleartext password (password_env) or in
// trust mode: for them it is decided without TLS, as a MySQL server does
// once its cache is warm. Users with only a mysql_native_password hash
// need the full path, which sends the cleartext password: Vitess allows
// that over TLS only.
type authServer struct {
	h         Handler
	sha2First bool
	s         *Server // for installGuard
}

// authUser is the Getter Vitess stores on the connection.
type authUser struct{ name string }

func (u authUser) Get() *querypb.VTGateCallerID { return &querypb.VTGateCallerID{Username: u.name} }

func (a *authServer) AuthMethods() []mysql.AuthMethod {
	return []mysql.AuthMethod{
		guarded{AuthMethod: mysql.NewMysqlNativeAuthMethod(a, a), s: a.s},
		guarded{AuthMethod: sha2Method{AuthMethod: mysql.NewSha2CachingAuthMethod(a, a, a), a: a}, s: a.s},
	}
}

// guarded installs the packet guard above TLS (installGuard) when Vitess
// hands the client's authentication data over: the first moment after
// the TLS upgrade at which the proxy holds the connection.
type guarded struct {
	mysql.AuthMethod
	s *Server
}

func (m guarded) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	if m.s != nil {
		if err := m.s.installGuard(c); err != nil {
			m.s.log.Error("cannot guard a TLS connection; refusing it", "err", err)
			return nil, sqlError(sqlerr.Wrap(sqlerr.Internal, err, "internal error"))
		}
	}
	return m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, addr)
}

func (a *authServer) DefaultAuthMethodDescription() mysql.AuthMethodDescription {
	if a.sha2First {
		return mysql.CachingSha2Password
	}
	return mysql.MysqlNativePassword
}

// HandleUser (UserValidator): any name; unknown users fail later with
// the same message as a wrong password, so names cannot be probed.
func (a *authServer) HandleUser(string, net.Addr) bool { return true }

func denied(user string) error {
	return mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError, "Access denied for user '%v'", user)
}

// verify admits user when the policy trusts the listener or match
// accepts the user's credentials; an unknown user gets the same error as
// a wrong password, so names cannot be probed.
func (a *authServer) verify(user string, match func(UserAuth) bool) (mysql.Getter, error) {
	ua, ok := a.h.LookupUser(user)
	switch {
	case ok && (ua.Trust || match(ua)):
		return authUser{user}, nil
	case !ok:
		a.failed(user, "no such user in the policy")
	default:
		a.failed(user, "wrong password")
	}
	return nil, denied(user)
}

// failed logs a refused login with its reason, for the operator only: the
// client's error is the same whatever the reason.
func (a *authServer) failed(user, reason string) {
	if a.s != nil && a.s.log != nil {
		a.s.log.Info("authentication failed", "user", user, "reason", reason)
	}
}

// UserEntryWithHash checks a mysql_native_password reply.
func (a *authServer) UserEntryWithHash(_ []*x509.Certificate, salt []byte, user string, reply []byte, _ net.Addr) (mysql.Getter, error) {
	return a.verify(user, func(ua UserAuth) bool {
		switch {
		case ua.Password != "":
			want := mysql.ScrambleMysqlNativePassword(salt, []byte(ua.Password))
			return len(reply) == len(want) && subtle.ConstantTimeCompare(reply, want) == 1
		case len(ua.NativeHash) == sha1.Size:
			return mysql.VerifyHashedMysqlNativePassword(reply, salt, ua.NativeHash)
		}
		return false
	})
}

// UserEntryWithCacheHash is caching_sha2_password's fast path.
func (a *authServer) UserEntryWithCacheHash(_ []*x509.Certificate, salt []byte, user string, reply []byte, _ net.Addr) (mysql.Getter, mysql.CacheState, error) {
	ua, ok := a.h.LookupUser(user)
	switch {
	case !ok:
		a.failed(user, "no such user in the policy")
		return nil, mysql.AuthRejected, nil
	case ua.Trust:
		return authUser{user}, mysql.AuthAccepted, nil
	case ua.Password != "":
		want := mysql.ScrambleCachingSha2Password(salt, []byte(ua.Password))
		if len(reply) == len(want) && subtle.ConstantTimeCompare(reply, want) == 1 {
			return authUser{user}, mysql.AuthAccepted, nil
		}
		a.failed(user, "wrong password")
		return nil, mysql.AuthRejected, nil
	}
	return nil, mysql.AuthNeedMoreData, nil
}

// UserEntryWithPassword is caching_sha2_password's full path (cleartext
// over TLS).
func (a *authServer) UserEntryWithPassword(_ []*x509.Certificate, user, password string, _ net.Addr) (mysql.Getter, error) {
	return a.verify(user, func(ua UserAuth) bool {
		switch {
		case ua.Password != "":
			return subtle.ConstantTimeCompare([]byte(password), []byte(ua.Password)) == 1
		case len(ua.NativeHash) == sha1.Size:
			h1 := sha1.Sum([]byte(password))
			h2 := sha1.Sum(h1[:])
			return bytes.Equal(h2[:], ua.NativeHash)
		}
		return false
	})
}

// sha2Method lets caching_sha2_password run without TLS: Vitess's method
// refuses plain TCP outright, although the fast path never sends the
// password. The full path still demands TLS (see
// UserEntryWithCacheHash).
type sha2Method struct {
	mysql.AuthMethod
	a *authServer
}

func (m sha2Method) HandleUser(c *mysql.Conn, user string) bool { return true }
