package broker

import (
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// frameOf encodes a request as handleFrame reads it (no size prefix).
func frameOf(req kmsg.Request, corr int32) []byte {
	var b []byte
	b = append(b, byte(req.Key()>>8), byte(req.Key()), byte(req.GetVersion()>>8), byte(req.GetVersion()))
	b = append(b, byte(corr>>24), byte(corr>>16), byte(corr>>8), byte(corr), 0, 1, 'f')
	if req.IsFlexible() {
		b = append(b, 0)
	}
	return req.AppendTo(b)
}

// securedFuzzBroker is fuzzBroker with a SASL listener and ACLs on.
func securedFuzzBroker(t testing.TB) (*Broker, *panicWatch) {
	watch := &panicWatch{}
	b := startBroker(t, "", func(cfg *Config) {
		cfg.Listeners = []ListenerConfig{{Name: "SASL", Protocol: ProtocolSASLPlaintext, Addr: "127.0.0.1:0",
			Mechanisms: []string{MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512}, PlainUsers: map[string]string{"u": "p"}}}
		cfg.SCRAMUsers = []SCRAMUser{{Mechanism: MechanismSCRAMSHA256, Name: "u", Password: "p"}}
		cfg.Authorizer, cfg.SuperUsers = true, []string{"User:u"}
		cfg.Logger = slog.New(watch)
		cfg.AutoCreateTopics = false
		cfg.FailedAuthDelay = 0
	})
	return b, watch
}

// FuzzSASLExchange feeds a SASL connection a handshake for a fuzzed
// mechanism, then fuzzed tokens (as SaslAuthenticate and as v0 bare
// tokens), then a fuzzed request frame: nothing panics; a failure ends
// that connection only (the next connection authenticates).
func FuzzSASLExchange(f *testing.F) {
	f.Add("PLAIN", []byte("\x00u\x00p"), []byte("n,,n=u,r=abc"), false, []byte{0, 3, 0, 12, 0, 0, 0, 1, 0, 0, 0})
	f.Add("SCRAM-SHA-256", []byte("n,,n=u,r=fyko+d2lbbFgONRv9qkxdawL"), []byte("c=biws,r=x,p=AAAA"), true, []byte{})
	f.Add("SCRAM-SHA-512", []byte("n,a=v,n=u,r=1"), []byte{0xff, 0}, false, []byte{0, 29, 0, 3})
	b, watch := securedFuzzBroker(f)
	f.Fuzz(func(t *testing.T, mech string, tok1, tok2 []byte, v0 bool, frame []byte) {
		c := testConn(b)
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Mechanism = mech
		if !v0 {
			hs.Version = 1
		}
		if err := exercise(t, c, watch, frameOf(hs, 1)); err != nil {
			t.Fatalf("handshake: %v", err)
		}
		if c.sasl.step == nil {
			return // unsupported mechanism: answered, then closed
		}
		for i, tok := range [][]byte{tok1, tok2} {
			if c.sasl.step == nil {
				break
			}
			if c.sasl.rawTokens {
				before := watch.panics.Load()
				r := c.rawSASLToken(tok)
				if watch.panics.Load() != before || r == nil {
					t.Fatalf("raw token %x: no reply or a panic", tok)
				}
				if r.fail != nil {
					return
				}
				continue
			}
			au := kmsg.NewPtrSASLAuthenticateRequest()
			au.Version, au.SASLAuthBytes = 2, tok
			r, err := c.handleFrame(frameOf(au, int32(2+i)))
			if err != nil {
				t.Fatalf("authenticate: %v", err)
			}
			if r.closeAfter {
				return
			}
		}
		if !tooExpensive(frame) {
			exercise(t, c, watch, frame)
		}
	})
}

// TestSASLFuzzSeedsLeaveBrokerUsable: after a failed exchange on one
// connection, another authenticates.
func TestSASLFuzzSeedsLeaveBrokerUsable(t *testing.T) {
	b, watch := securedFuzzBroker(t)
	c := testConn(b)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	if err := exercise(t, c, watch, frameOf(hs, 1)); err != nil {
		t.Fatal(err)
	}
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 1, []byte("garbage")
	r, err := c.handleFrame(frameOf(au, 2))
	if err != nil || !r.closeAfter {
		t.Fatalf("garbage token: %v %+v", err, r)
	}
	c2 := testConn(b)
	exercise(t, c2, watch, frameOf(hs, 1))
	au.SASLAuthBytes = []byte("\x00u\x00p")
	r, err = c2.handleFrame(frameOf(au, 2))
	if err != nil || r.closeAfter || !c2.sasl.authenticated || c2.principal != "User:u" {
		t.Fatalf("second connection: %v %+v %q", err, r, c2.principal)
	}
}

// FuzzACLRequests feeds CreateAcls, DescribeAcls and DeleteAcls with fuzzed
// fields to an authenticated super user's connection: nothing panics and
// every request is answered.
func FuzzACLRequests(f *testing.F) {
	f.Add(int8(2), "orders-", int8(4), "User:a", "*", int8(4), int8(3), true)
	f.Add(int8(1), "", int8(2), "", "", int8(1), int8(1), false)
	f.Add(int8(4), "kafka-cluster", int8(3), "User:*", "10.0.0.1", int8(2), int8(2), true)
	b, watch := securedFuzzBroker(f)
	f.Fuzz(func(t *testing.T, rt int8, name string, pt int8, principal, host string, op, perm int8, nullName bool) {
		c := testConn(b)
		c.sasl.authenticated, c.principal = true, "User:u"
		cr := kmsg.NewPtrCreateACLsRequest()
		cr.Version = 3
		cc := kmsg.NewCreateACLsRequestCreation()
		cc.ResourceType, cc.ResourceName, cc.ResourcePatternType = kmsg.ACLResourceType(rt), name, kmsg.ACLResourcePatternType(pt)
		cc.Principal, cc.Host, cc.Operation, cc.PermissionType = principal, host, kmsg.ACLOperation(op), kmsg.ACLPermissionType(perm)
		cr.Creations = append(cr.Creations, cc)
		if err := exercise(t, c, watch, frameOf(cr, 1)); err != nil {
			t.Fatal(err)
		}
		var n *string
		if !nullName {
			n = &name
		}
		de := kmsg.NewPtrDescribeACLsRequest()
		de.Version = 3
		de.ResourceType, de.ResourceName, de.ResourcePatternType = kmsg.ACLResourceType(rt), n, kmsg.ACLResourcePatternType(pt)
		de.Principal, de.Host, de.Operation, de.PermissionType = &principal, &host, kmsg.ACLOperation(op), kmsg.ACLPermissionType(perm)
		if err := exercise(t, c, watch, frameOf(de, 2)); err != nil {
			t.Fatal(err)
		}
		dl := kmsg.NewPtrDeleteACLsRequest()
		dl.Version = 3
		df := kmsg.NewDeleteACLsRequestFilter()
		df.ResourceType, df.ResourceName, df.ResourcePatternType = kmsg.ACLResourceType(rt), n, kmsg.ACLResourcePatternType(pt)
		df.Principal, df.Host, df.Operation, df.PermissionType = &principal, &host, kmsg.ACLOperation(op), kmsg.ACLPermissionType(perm)
		dl.Filters = append(dl.Filters, df)
		if err := exercise(t, c, watch, frameOf(dl, 3)); err != nil {
			t.Fatal(err)
		}
	})
}
