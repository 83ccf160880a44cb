// Package kafkaauth turns a Kafka client's security settings
// (security.protocol, sasl.*, ssl.*) into what a franz-go client needs: a
// TLS configuration and a SASL mechanism.
//
//	sec, err := kafkaauth.New(props, kafkaauth.Options{Environ: os.Environ()})
//	// sec.TLS → kgo.DialTLSConfig, sec.Mechanism → kgo.SASL
//
// Mechanisms: PLAIN and SCRAM-SHA-256/512 (username and password from the
// PlainLoginModule or ScramLoginModule of sasl.jaas.config); OAUTHBEARER
// with Kafka's OAuthBearerLoginCallbackHandler (client credentials posted
// to sasl.oauthbearer.token.endpoint.url, or a token read from a file:
// URL; tokens cached and refreshed), without a handler (Kafka's unsecured
// JWTs, for tests), or with aws-msk-iam-auth's
// IAMOAuthBearerLoginCallbackHandler (a signed MSK IAM token); and
// AWS_MSK_IAM (aws-msk-iam-auth's IAMLoginModule), with credentials from
// the AWS default chain or the JAAS options. GSSAPI (Kerberos) is not
// supported and says so.
//
// The JAAS configuration is parsed with Kafka's rules (package jaas). No
// error quotes a password or a JAAS configuration.
package kafkaauth

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/tributary-dev/tributary/internal/jaas"
	"github.com/tributary-dev/tributary/internal/kafkatls"
)

// Login module and callback handler classes this package recognises.
const (
	PlainModule       = "org.apache.kafka.common.security.plain.PlainLoginModule"
	ScramModule       = "org.apache.kafka.common.security.scram.ScramLoginModule"
	OAuthModule       = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	OAuthHandler      = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	oauthHandlerOld   = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"
	IAMModule         = "software.amazon.msk.auth.iam.IAMLoginModule"
	IAMClientHandler  = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
	IAMOAuthHandler   = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"
	protocolPlaintext = "PLAINTEXT"
)

// Options are what New needs besides the properties.
type Options struct {
	// Environ is the environment (os.Environ()): the AWS credential
	// chain reads it.
	Environ []string
	// HTTPClient fetches OAuth tokens and AWS credentials; nil builds one
	// from the sasl.login.*.timeout.ms settings and the ssl.* trust.
	HTTPClient *http.Client
	// JAASFile is the JAAS login configuration file
	// (java.security.auth.login.config) whose KafkaClient section stands
	// in for an unset sasl.jaas.config, as in Kafka's clients; "" for
	// none.
	JAASFile string
}

// Security is a client's security configuration.
type Security struct {
	// Protocol is security.protocol: PLAINTEXT, SSL, SASL_PLAINTEXT or
	// SASL_SSL.
	Protocol string
	// TLS is set for SSL and SASL_SSL; the dialer sets ServerName.
	TLS *tls.Config
	// Mechanism is set for SASL_PLAINTEXT and SASL_SSL.
	Mechanism sasl.Mechanism
	// Principal names who authenticates (a user name, an OAuth client
	// id, "AWS IAM"), for messages; "" without SASL.
	Principal string
	// Notes are settings accepted and ignored, one line each.
	Notes []string
}

// Secured reports whether the settings ask for more than PLAINTEXT.
func (s *Security) Secured() bool { return s.Protocol != protocolPlaintext }

// IsSecurityKey reports whether k is a security setting of a Kafka client.
func IsSecurityKey(k string) bool {
	return k == "security.protocol" || strings.HasPrefix(k, "sasl.") || strings.HasPrefix(k, "ssl.")
}

// IsSecret reports whether the client setting k holds a secret: Kafka's
// PASSWORD-typed client settings (sasl.jaas.config, ssl.*password,
// ssl.keystore.key; the certificates Kafka also types PASSWORD are not
// secret).
func IsSecret(k string) bool {
	return k == "sasl.jaas.config" || strings.HasSuffix(k, ".sasl.jaas.config") || kafkatls.Secret(k) ||
		strings.HasSuffix(k, ".ssl.keystore.key") || (strings.Contains(k, "ssl.") && strings.HasSuffix(k, "password"))
}

// knownSASL are sasl.* settings this package reads or knowingly accepts.
var knownSASL = []string{
	"sasl.mechanism", "sasl.jaas.config", "sasl.login.callback.handler.class", "sasl.client.callback.handler.class",
	"sasl.oauthbearer.token.endpoint.url", "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name",
	"sasl.oauthbearer.header.urlencode", "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms",
	"sasl.login.retry.backoff.ms", "sasl.login.retry.backoff.max.ms", "sasl.login.refresh.window.factor",
	"sasl.login.refresh.window.jitter", "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
	"sasl.login.class", "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
	"sasl.oauthbearer.jwks.endpoint.url", "sasl.oauthbearer.clock.skew.seconds",
}

// Known reports whether k is a security setting New understands.
func Known(k string) bool {
	return k == "security.protocol" || slices.Contains(knownSASL, k) || kafkatls.Known(k) || strings.HasPrefix(k, "sasl.kerberos.")
}

// New reads the security settings of props (a client's properties, with
// no prefix). It checks everything it can without the network: the
// protocol and mechanism, the JAAS configuration, the TLS material, the
// OAuth and AWS settings.
func New(props map[string]string, opts Options) (*Security, error) {
	s := &Security{Protocol: strings.ToUpper(strings.TrimSpace(props["security.protocol"]))}
	if s.Protocol == "" {
		s.Protocol = protocolPlaintext
	}
	var useTLS, useSASL bool
	switch s.Protocol {
	case protocolPlaintext:
		for _, k := range []string{"sasl.jaas.config", "sasl.mechanism", kafkatls.TruststoreLocation, kafkatls.KeystoreLocation} {
			if strings.TrimSpace(props[k]) != "" {
				s.Notes = append(s.Notes, fmt.Sprintf("%s is set but security.protocol is PLAINTEXT (the default): the Kafka clients do not use the SASL and SSL settings (an HTTPS REST listener may still use ssl.*)", k))
				break
			}
		}
		return s, nil
	case "SSL":
		useTLS = true
	case "SASL_PLAINTEXT":
		useSASL = true
	case "SASL_SSL":
		useTLS, useSASL = true, true
	default:
		return nil, fmt.Errorf("security.protocol=%s: must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", props["security.protocol"])
	}
	if useTLS {
		cfg, notes, err := kafkatls.Client(props)
		s.Notes = append(s.Notes, notes...)
		if err != nil {
			return nil, err
		}
		s.TLS = cfg
	}
	if useSASL {
		if err := s.sasl(props, opts); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Security) sasl(props map[string]string, opts Options) error {
	mech := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	switch mech {
	case "":
		return errors.New("sasl.mechanism is not set, and Kafka's default, GSSAPI (Kerberos), is not supported: set PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM")
	case "GSSAPI":
		return errors.New("sasl.mechanism=GSSAPI: Kerberos is not supported; use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER or AWS_MSK_IAM")
	}
	raw := strings.TrimSpace(props["sasl.jaas.config"])
	var mod jaas.Module
	var err error
	switch {
	case raw != "":
		if mod, err = jaas.ParseClient(raw); err != nil {
			return fmt.Errorf("sasl.jaas.config: %w", err)
		}
	case opts.JAASFile != "":
		// Kafka's fallback: the KafkaClient section of the JAAS file.
		f, err := jaas.LoadFile(opts.JAASFile)
		if err != nil {
			return err
		}
		mods, err := f.Section("KafkaClient")
		if err != nil {
			return fmt.Errorf("sasl.jaas.config is not set, and the JAAS file %s has %w", opts.JAASFile, err)
		}
		if len(mods) != 1 {
			return fmt.Errorf("JAAS file %s: section KafkaClient has %d login modules, should be 1 module", opts.JAASFile, len(mods))
		}
		mod = mods[0]
	default:
		return fmt.Errorf("sasl.jaas.config is not set: SASL mechanism %s needs it (for example %s)", mech, example(mech))
	}
	loginHandler := strings.TrimSpace(props["sasl.login.callback.handler.class"])
	client := opts.HTTPClient
	if client == nil {
		if client, err = httpClient(props); err != nil {
			return err
		}
	}
	switch mech {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if mod.Class != PlainModule && mod.Class != ScramModule {
			return wrongModule(mech, mod.Class)
		}
		user, pass := mod.Options["username"], mod.Options["password"]
		if user == "" {
			return fmt.Errorf("sasl.jaas.config: %s has no username option", mod.Class)
		}
		s.Principal = user
		switch mech {
		case "PLAIN":
			s.Mechanism = plain.Auth{User: user, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			s.Mechanism = scram.Auth{User: user, Pass: pass, IsToken: mod.Options["tokenauth"] == "true"}.AsSha256Mechanism()
		default:
			s.Mechanism = scram.Auth{User: user, Pass: pass, IsToken: mod.Options["tokenauth"] == "true"}.AsSha512Mechanism()
		}
	case "OAUTHBEARER":
		switch loginHandler {
		case IAMOAuthHandler:
			if mod.Class != OAuthModule {
				return wrongModule(mech, mod.Class)
			}
			creds, err := newAWSCredentials(mod.Options, opts.Environ, client)
			if err != nil {
				return err
			}
			region := awsRegion(opts.Environ)
			if region == "" {
				return errors.New("MSK IAM through OAUTHBEARER signs for a region: set AWS_REGION (the worker's environment)")
			}
			s.Principal = "AWS IAM"
			s.Mechanism = oauth.Oauth(newMSKTokenSource(creds, region).auth)
		case OAuthHandler, oauthHandlerOld, "":
			if mod.Class != OAuthModule {
				return wrongModule(mech, mod.Class)
			}
			src, principal, err := newOAuthSource(props, mod.Options, loginHandler != "", client)
			if err != nil {
				return err
			}
			s.Principal = principal
			s.Mechanism = oauth.Oauth(src.auth)
		default:
			return fmt.Errorf("sasl.login.callback.handler.class=%s: not a handler Tributary has (it has %s and %s)", loginHandler, OAuthHandler, IAMOAuthHandler)
		}
	case "AWS_MSK_IAM":
		if mod.Class != IAMModule {
			return wrongModule(mech, mod.Class)
		}
		if h := strings.TrimSpace(props["sasl.client.callback.handler.class"]); h != "" && h != IAMClientHandler {
			return fmt.Errorf("sasl.client.callback.handler.class=%s: AWS_MSK_IAM takes %s", h, IAMClientHandler)
		}
		creds, err := newAWSCredentials(mod.Options, opts.Environ, client)
		if err != nil {
			return err
		}
		s.Principal = "AWS IAM"
		s.Mechanism = aws.ManagedStreamingIAM(func(ctx context.Context) (aws.Auth, error) {
			c, err := creds.retrieve(ctx)
			if err != nil {
				return aws.Auth{}, err
			}
			return aws.Auth{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken, UserAgent: "tributary"}, nil
		})
	default:
		return fmt.Errorf("sasl.mechanism=%s: not supported (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER and AWS_MSK_IAM are)", props["sasl.mechanism"])
	}
	return nil
}

func example(mech string) string {
	switch mech {
	case "PLAIN":
		return PlainModule + ` required username="…" password="…";`
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		return ScramModule + ` required username="…" password="…";`
	case "OAUTHBEARER":
		return OAuthModule + ` required clientId="…" clientSecret="…";`
	case "AWS_MSK_IAM":
		return IAMModule + " required;"
	}
	return "a login module"
}

func wrongModule(mech, class string) error {
	return fmt.Errorf("sasl.jaas.config: login module %s does not go with sasl.mechanism=%s (use %s)", class, mech, example(mech))
}

// httpClient is the client for token endpoints and AWS credential
// endpoints: Kafka's sasl.login.connect.timeout.ms and
// sasl.login.read.timeout.ms (10 s each by default), and the ssl.* trust
// settings for HTTPS endpoints, as Kafka's HttpAccessTokenRetriever uses.
func httpClient(props map[string]string) (*http.Client, error) {
	connect, err := millis(props, "sasl.login.connect.timeout.ms", 10*time.Second)
	if err != nil {
		return nil, err
	}
	read, err := millis(props, "sasl.login.read.timeout.ms", 10*time.Second)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSHandshakeTimeout = connect
	tr.ResponseHeaderTimeout = read
	if props[kafkatls.TruststoreLocation] != "" || props[kafkatls.TruststoreCertificates] != "" {
		trust := map[string]string{}
		for _, k := range []string{kafkatls.TruststoreLocation, kafkatls.TruststoreType, kafkatls.TruststorePassword, kafkatls.TruststoreCertificates} {
			if v, ok := props[k]; ok {
				trust[k] = v
			}
		}
		cfg, _, err := kafkatls.Client(trust)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	return &http.Client{Transport: tr, Timeout: connect + read}, nil
}

func millis(props map[string]string, k string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(props[k])
	if v == "" {
		return def, nil
	}
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%s: not a non-negative number of milliseconds", k, v)
	}
	return time.Duration(n) * time.Millisecond, nil
}
