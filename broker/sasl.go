package broker

import (
	"bytes"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/xdg-go/scram"
)

// SaslHandshake (17, v0-1) and SaslAuthenticate (36, v0-2): Kafka's SASL
// exchange (SaslServerAuthenticator). On a SASL listener a connection may
// send only ApiVersions, SaslHandshake and SaslAuthenticate until it has
// authenticated; anything else closes it. After SaslHandshake v0 the
// client sends bare SASL tokens rather than SaslAuthenticate requests.
// A failed authentication is answered with SASL_AUTHENTICATION_FAILED
// and Kafka's message after connection.failed.authentication.delay.ms,
// and the connection is closed. With connections.max.reauth.ms the
// session has a lifetime: the client re-authenticates on the same
// connection (KIP-368) with the same mechanism and principal, or the
// connection is closed at its next request after the session expired.

// saslMaxReceive bounds a request frame before authentication completes
// (Kafka's sasl.server.max.receive.size default).
const saslMaxReceive = 524288

// saslSession is a connection's SASL state; only the read loop touches it.
type saslSession struct {
	mech          string // mechanism of the exchange under way
	rawTokens     bool   // SaslHandshake v0: bare tokens follow
	step          saslStep
	authenticated bool
	authMech      string // mechanism of the completed authentication
	badReauth     string // a re-authentication asked for another mechanism
	expires       time.Time
}

// saslStep takes a client token and returns the server's token, whether
// the exchange is complete (with the authenticated user), or an
// authentication failure.
type saslStep func(token []byte) (out []byte, user string, done bool, err error)

// authFailure is an authentication failure whose text the client gets.
type authFailure string

func (e authFailure) Error() string { return string(e) }

// invalidCredentials is Kafka's generic text for a failed exchange, which
// never tells whether the user exists.
func invalidCredentials(mech string, reauth bool) authFailure {
	what := "authentication"
	if reauth {
		what = "re-authentication"
	}
	return authFailure("Authentication failed during " + what + " due to invalid credentials with SASL mechanism " + mech)
}

var errIllegalSASLState = kerr.IllegalSaslState.Code

// gate refuses requests a connection may not send yet: before SASL
// authentication completes, and after its session expired.
func (c *conn) gate(key int16) error {
	if !c.l.cfg.sasl() {
		return nil
	}
	s := &c.sasl
	if !s.authenticated {
		switch {
		case key == apiVersionsKey && s.step == nil, key == 17:
			return nil
		case key == 36 && s.step != nil:
			return nil
		case s.step != nil:
			return fmt.Errorf("unexpected Kafka request of type %s during SASL authentication", kmsg.NameForKey(key))
		}
		return fmt.Errorf("unexpected Kafka request of type %s during SASL handshake", kmsg.NameForKey(key))
	}
	if key != 17 && key != 36 && !s.expires.IsZero() && time.Now().After(s.expires) {
		return fmt.Errorf("SASL session of %s expired (connections.max.reauth.ms) without re-authentication", c.principal)
	}
	return nil
}

func handleSASLHandshake(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.SASLHandshakeRequest)
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	if !c.l.cfg.sasl() {
		resp.ErrorCode = errIllegalSASLState
		return &reply{resp: resp}
	}
	resp.SupportedMechanisms = c.l.cfg.Mechanisms
	s := &c.sasl
	step := c.newSASLStep(req.Mechanism)
	if step == nil {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		return &reply{resp: resp, closeAfter: true, delay: c.b.cfg.FailedAuthDelay}
	}
	s.badReauth = ""
	if s.authenticated && req.Mechanism != s.authMech {
		s.badReauth = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", req.Mechanism, s.authMech)
	}
	s.mech, s.step, s.rawTokens = req.Mechanism, step, req.Version == 0
	return &reply{resp: resp}
}

func handleSASLAuthenticate(c *conn, kreq kmsg.Request) *reply {
	req := kreq.(*kmsg.SASLAuthenticateRequest)
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	s := &c.sasl
	if !c.l.cfg.sasl() || s.step == nil || s.rawTokens {
		msg := "SaslAuthenticate request received after successful authentication"
		resp.ErrorCode, resp.ErrorMessage = errIllegalSASLState, &msg
		return &reply{resp: resp}
	}
	out, lifetime, err := c.saslToken(req.SASLAuthBytes)
	if err != nil {
		msg := err.Error()
		resp.ErrorCode, resp.ErrorMessage = kerr.SaslAuthenticationFailed.Code, &msg
		return &reply{resp: resp, closeAfter: true, delay: c.b.cfg.FailedAuthDelay}
	}
	resp.SASLAuthBytes = out
	if out == nil {
		resp.SASLAuthBytes = []byte{}
	}
	resp.SessionLifetimeMillis = lifetime.Milliseconds()
	return &reply{resp: resp}
}

// saslToken runs one step of the exchange; when it completes, the
// connection is authenticated and the session's lifetime returned.
func (c *conn) saslToken(tok []byte) ([]byte, time.Duration, error) {
	s := &c.sasl
	reauth := s.authenticated
	if s.badReauth != "" {
		return nil, 0, authFailure(s.badReauth)
	}
	out, user, done, err := s.step(tok)
	if err != nil {
		if _, ok := err.(authFailure); !ok {
			c.logger.Info("SASL authentication failed", "mechanism", s.mech, "reason", err)
			err = invalidCredentials(s.mech, reauth)
		}
		return nil, 0, err
	}
	if !done {
		return out, 0, nil
	}
	principal := "User:" + user
	if reauth && principal != c.principal {
		return nil, 0, authFailure(fmt.Sprintf("Cannot change principals during re-authentication from User.%s: User.%s", c.principal[len("User:"):], user))
	}
	s.authenticated, s.authMech, s.step, s.rawTokens = true, s.mech, nil, false
	if !reauth {
		// Only the first authentication sets it: replies still being
		// made (group responses) read it.
		c.principal = principal
	}
	var lifetime time.Duration
	s.expires = time.Time{}
	if d := c.l.cfg.ReauthAfter; d > 0 {
		lifetime = d
		s.expires = time.Now().Add(d)
	}
	if !reauth {
		c.logger.Debug("SASL authenticated", "principal", principal, "mechanism", s.mech)
	}
	return out, lifetime, nil
}

// rawSASLToken answers a bare token sent after SaslHandshake v0.
func (c *conn) rawSASLToken(tok []byte) *reply {
	out, _, err := c.saslToken(tok)
	if err != nil {
		// Kafka has no way to tell a v0 client why: it closes.
		return &reply{fail: err}
	}
	return &reply{raw: out, rawSet: true}
}

// newSASLStep starts an exchange of an enabled mechanism; nil if the
// listener does not enable it.
func (c *conn) newSASLStep(mech string) saslStep {
	enabled := false
	for _, m := range c.l.cfg.Mechanisms {
		enabled = enabled || m == mech
	}
	if !enabled {
		return nil
	}
	switch mech {
	case MechanismPlain:
		users := c.l.cfg.PlainUsers
		return func(tok []byte) ([]byte, string, bool, error) {
			parts := bytes.Split(tok, []byte{0})
			if len(parts) != 3 {
				return nil, "", false, authFailure(fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", len(parts)))
			}
			authzid, user, pw := string(parts[0]), string(parts[1]), parts[2]
			switch {
			case user == "":
				return nil, "", false, authFailure("Authentication failed: username not specified")
			case len(pw) == 0:
				return nil, "", false, authFailure("Authentication failed: password not specified")
			}
			want, ok := users[user]
			if !ok || subtle.ConstantTimeCompare([]byte(want), pw) != 1 {
				return nil, "", false, authFailure("Authentication failed: Invalid username or password")
			}
			if authzid != "" && authzid != user {
				return nil, "", false, authFailure("Authentication failed: Client requested an authorization id that is different from username")
			}
			return nil, user, true, nil
		}
	case MechanismSCRAMSHA256, MechanismSCRAMSHA512:
		_, gen, _ := scramHash(mech)
		srv, err := gen.NewServer(func(user string) (scram.StoredCredentials, error) {
			cred := c.b.sec.credential(user, mech)
			if cred == nil {
				return scram.StoredCredentials{}, fmt.Errorf("no %s credential for the user", mech)
			}
			return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(cred.Salt), Iters: cred.Iterations},
				StoredKey: cred.StoredKey, ServerKey: cred.ServerKey}, nil
		})
		if err != nil {
			return nil
		}
		conv := srv.NewConversation()
		first := true
		return func(tok []byte) ([]byte, string, bool, error) {
			out, err := conv.Step(string(tok))
			if err != nil {
				return nil, "", false, err
			}
			if first {
				first = false
				if z := conv.AuthzID(); z != "" && z != conv.Username() {
					return nil, "", false, authFailure("Authentication failed: Client requested an authorization id that is different from username")
				}
				return []byte(out), "", false, nil
			}
			if !conv.Valid() {
				return nil, "", false, fmt.Errorf("invalid client proof")
			}
			return []byte(out), conv.Username(), true, nil
		}
	}
	return nil
}
