package pgwire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"

	"github.com/ddp-proxy/ddp-proxy/sqlerr"
)

// scramMechanism is the only SASL mechanism offered. SCRAM-SHA-256-PLUS
// (channel binding) is not advertised, so clients must not require it.
const scramMechanism = "SCRAM-SHA-256"

// authenticate runs the authentication exchange for user and sends
// AuthenticationOk on success.
//
// Unknown users, users without usable credentials and wrong passwords
// all get the same FATAL 28P01 after a complete SCRAM exchange: an unknown
// user is given stable fake credentials, so the exchange looks the same
// (salt, iterations, timing) as for a real one.
func (c *conn) authenticate(user string) error {
	a, known := c.srv.cfg.Handler.LookupUser(user)
	if known && a.Trust {
		c.send(&pgproto3.AuthenticationOk{})
		return nil
	}
	creds, usable := c.srv.credentials(user, a, known)
	// Why a failure would fail, for the server's log only (the client
	// learns nothing that tells an unknown user from a wrong password).
	switch {
	case !known:
		c.authFailure = "no such user in the policy"
	case !usable:
		c.authFailure = "the user has no password a PostgreSQL client can use (a MySQL-only password hash, or an invalid SCRAM verifier)"
		c.log.Warn("user has no usable SCRAM credentials; refusing login")
	default:
		c.authFailure = "wrong password"
	}
	failed := sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user %q", user)
	if c.tls && c.srv.cfg.CleartextOverTLS {
		return c.authenticateCleartext(creds, usable, failed)
	}

	c.send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return protocolErr("expected SASL response, got %s", msgName(msg))
	}
	if first.AuthMechanism != scramMechanism {
		return protocolErr("client selected an invalid SASL authentication mechanism")
	}
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) {
		// The SCRAM user name is ignored (libpq sends none): the
		// startup packet's user is the one being authenticated.
		return creds, nil
	})
	if err != nil {
		return fmt.Errorf("scram server: %w", err)
	}
	conv := srv.NewConversation()
	serverFirst, err := conv.Step(string(first.Data))
	if err != nil {
		return sqlerr.Wrap(sqlerr.ProtocolViolation, err, "malformed SCRAM message")
	}
	c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	msg, err = c.be.Receive()
	if err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return protocolErr("expected SASL response, got %s", msgName(msg))
	}
	serverFinal, err := conv.Step(string(final.Data))
	if err != nil || !conv.Valid() || !usable {
		return failed
	}
	c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte(serverFinal)})
	c.send(&pgproto3.AuthenticationOk{})
	// After authentication a 'p' message is a protocol violation again.
	return c.be.SetAuthType(pgproto3.AuthTypeOk)
}

// authenticateCleartext asks for the password in cleartext (only ever on a
// TLS connection) and checks it against creds the way PostgreSQL checks a
// cleartext password against a SCRAM verifier: derive StoredKey and
// ServerKey from the candidate with creds' salt and iterations and compare
// in constant time. Unknown users have fake creds, so they cost the same.
func (c *conn) authenticateCleartext(creds scram.StoredCredentials, usable bool, failed error) error {
	c.send(&pgproto3.AuthenticationCleartextPassword{})
	if err := c.flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeCleartextPassword); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return err
	}
	pw, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return protocolErr("expected password response, got %s", msgName(msg))
	}
	if pw.Password == "" {
		// PostgreSQL refuses empty passwords before checking them.
		return failed
	}
	client, err := scram.SHA256.NewClient("", pw.Password, "")
	if err != nil {
		client, _ = scram.SHA256.NewClientUnprepped("", pw.Password, "")
	}
	got := client.GetStoredCredentials(creds.KeyFactors)
	match := hmac.Equal(got.StoredKey, creds.StoredKey) && hmac.Equal(got.ServerKey, creds.ServerKey)
	if !match || !usable {
		return failed
	}
	c.send(&pgproto3.AuthenticationOk{})
	return c.be.SetAuthType(pgproto3.AuthTypeOk)
}

// credentials returns the SCRAM credentials to check user against and
// whether they are real. Unusable ones (unknown user, malformed verifier,
// no password) are fake but well-formed.
func (s *Server) credentials(user string, a UserAuth, known bool) (scram.StoredCredentials, bool) {
	if known {
		switch {
		case a.SCRAMVerifier != "":
			creds, err := ParseSCRAMVerifier(a.SCRAMVerifier)
			if err == nil {
				return creds, true
			}
			s.log.Warn("invalid SCRAM verifier", "user", user, "err", err)
		case a.Password != "":
			return s.creds.derive(s.userSalt("salt", user), user, a.Password), true
		}
	}
	return scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(s.userSalt("salt", user)), Iters: scramIterations},
		StoredKey:  s.userSalt("stored-key", user),
		ServerKey:  s.userSalt("server-key", user),
	}, false
}

// userSalt is HMAC(server secret, purpose ‖ user): random per server,
// stable per user for the server's lifetime.
func (s *Server) userSalt(purpose, user string) []byte {
	m := hmac.New(sha256.New, s.secret[:])
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write([]byte(user))
	sum := m.Sum(nil)
	if purpose == "salt" {
		return sum[:16]
	}
	return sum
}

// credCache keeps the credentials derived from cleartext passwords:
// PBKDF2 with 4096 iterations is slow on purpose, and paying it on every
// login would make the proxy easy to load down.
type credCache struct {
	mu      sync.Mutex
	entries map[string]credEntry
}

type credEntry struct {
	pwHash [32]byte
	creds  scram.StoredCredentials
}

func (cc *credCache) derive(salt []byte, user, password string) scram.StoredCredentials {
	h := sha256.Sum256([]byte(password))
	cc.mu.Lock()
	e, ok := cc.entries[user]
	cc.mu.Unlock()
	if ok && e.pwHash == h {
		return e.creds
	}
	// SASLprep the password as libpq does; like PostgreSQL, fall back to
	// the raw bytes when the password is not valid for SASLprep.
	client, err := scram.SHA256.NewClient(user, password, "")
	if err != nil {
		client, _ = scram.SHA256.NewClientUnprepped(user, password, "")
	}
	creds := client.GetStoredCredentials(scram.KeyFactors{Salt: string(salt), Iters: scramIterations})
	cc.mu.Lock()
	cc.entries[user] = credEntry{pwHash: h, creds: creds}
	cc.mu.Unlock()
	return creds
}

// ParseSCRAMVerifier parses a PostgreSQL SCRAM-SHA-256 verifier (the
// rolpassword format): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>,
// salt and keys in standard base64.
func ParseSCRAMVerifier(v string) (scram.StoredCredentials, error) {
	var none scram.StoredCredentials
	parts := strings.Split(v, "$")
	if len(parts) != 3 || parts[0] != scramMechanism {
		return none, errors.New("verifier is not SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>")
	}
	iterStr, saltStr, ok := strings.Cut(parts[1], ":")
	if !ok {
		return none, errors.New("verifier lacks <iterations>:<salt>")
	}
	iters, err := strconv.Atoi(iterStr)
	if err != nil || iters < 1 {
		return none, errors.New("verifier iteration count is not a positive integer")
	}
	salt, err := base64.StdEncoding.DecodeString(saltStr)
	if err != nil || len(salt) == 0 {
		return none, errors.New("verifier salt is not base64")
	}
	storedStr, serverStr, ok := strings.Cut(parts[2], ":")
	if !ok {
		return none, errors.New("verifier lacks <StoredKey>:<ServerKey>")
	}
	stored, err1 := base64.StdEncoding.DecodeString(storedStr)
	server, err2 := base64.StdEncoding.DecodeString(serverStr)
	if err1 != nil || err2 != nil || len(stored) != sha256.Size || len(server) != sha256.Size {
		return none, errors.New("verifier keys are not base64 SHA-256 digests")
	}
	return scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(salt), Iters: iters},
		StoredKey:  stored,
		ServerKey:  server,
	}, nil
}
