package kafkaauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// oauthSource gives OAUTHBEARER tokens: fetched (client credentials, a
// file, an unsecured JWT), cached, and fetched again once the refresh
// window of their lifetime has passed (sasl.login.refresh.window.factor,
// 0.8 by default, as Kafka's ExpiringCredentialRefreshingLogin).
type oauthSource struct {
	fetch      func(ctx context.Context) (token string, expires time.Time, err error)
	extensions map[string]string
	window     float64
	backoff    time.Duration
	backoffMax time.Duration
	now        func() time.Time

	mu      sync.Mutex
	token   string
	refresh time.Time
}

// newOAuthSource reads OAuthBearerLoginModule's options: with a login
// callback handler (secured), client credentials or a file: URL; without
// one, Kafka's unsecured JWT options.
func newOAuthSource(props, opts map[string]string, secured bool, client *http.Client) (*oauthSource, string, error) {
	s := &oauthSource{window: 0.8, backoff: 100 * time.Millisecond, backoffMax: 10 * time.Second, now: time.Now, extensions: map[string]string{}}
	if v := strings.TrimSpace(props["sasl.login.refresh.window.factor"]); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0.5 || f > 1 {
			return nil, "", fmt.Errorf("sasl.login.refresh.window.factor=%s: must be between 0.5 and 1.0", v)
		}
		s.window = f
	}
	var err error
	if s.backoff, err = millis(props, "sasl.login.retry.backoff.ms", s.backoff); err != nil {
		return nil, "", err
	}
	if s.backoffMax, err = millis(props, "sasl.login.retry.backoff.max.ms", s.backoffMax); err != nil {
		return nil, "", err
	}
	for k, v := range opts {
		if name, ok := strings.CutPrefix(k, "extension_"); ok {
			s.extensions[name] = v
		}
	}
	if !secured {
		sub := opts["unsecuredLoginStringClaim_sub"]
		if sub == "" {
			return nil, "", errors.New("sasl.jaas.config: OAUTHBEARER without sasl.login.callback.handler.class makes Kafka's unsecured JWTs, which need the unsecuredLoginStringClaim_sub option (for a real identity provider set sasl.login.callback.handler.class=" + OAuthHandler + " and sasl.oauthbearer.token.endpoint.url)")
		}
		for k, v := range opts {
			if name, ok := strings.CutPrefix(k, "unsecuredLoginExtension_"); ok {
				s.extensions[name] = v
			}
		}
		s.fetch = func(context.Context) (string, time.Time, error) { return unsecuredJWT(opts, s.now()) }
		return s, sub, nil
	}
	endpoint := strings.TrimSpace(props["sasl.oauthbearer.token.endpoint.url"])
	if endpoint == "" {
		return nil, "", errors.New("sasl.oauthbearer.token.endpoint.url is not set: " + OAuthHandler + " needs the identity provider's token endpoint")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, "", fmt.Errorf("sasl.oauthbearer.token.endpoint.url: %w", err)
	}
	switch u.Scheme {
	case "file":
		path := u.Path
		s.fetch = func(context.Context) (string, time.Time, error) {
			b, err := os.ReadFile(path)
			if err != nil {
				return "", time.Time{}, fmt.Errorf("OAUTHBEARER token file: %w", err)
			}
			tok := strings.TrimSpace(string(b))
			return tok, jwtExpiry(tok, s.now()), nil
		}
		return s, "token file " + path, nil
	case "http", "https":
	default:
		return nil, "", fmt.Errorf("sasl.oauthbearer.token.endpoint.url: scheme %s is not http, https or file", u.Scheme)
	}
	id, secret := opts["clientId"], opts["clientSecret"]
	if id == "" || secret == "" {
		return nil, "", errors.New("sasl.jaas.config: OAuthBearerLoginModule needs the clientId and clientSecret options for the client credentials grant")
	}
	if strings.EqualFold(strings.TrimSpace(props["sasl.oauthbearer.header.urlencode"]), "true") {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	scope := opts["scope"]
	s.fetch = func(ctx context.Context) (string, time.Time, error) {
		return clientCredentials(ctx, client, endpoint, id, secret, scope, s.now())
	}
	return s, "OAuth client " + opts["clientId"], nil
}

// auth is franz-go's OAUTHBEARER callback: the cached token, or a new one
// once the cached one is due for refresh (retrying with Kafka's login
// backoff while ctx lasts).
func (s *oauthSource) auth(ctx context.Context) (oauth.Auth, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.now().Before(s.refresh) {
		return oauth.Auth{Token: s.token, Extensions: s.extensions}, nil
	}
	backoff := s.backoff
	for attempt := 1; ; attempt++ {
		tok, exp, err := s.fetch(ctx)
		if err == nil {
			now := s.now()
			life := exp.Sub(now)
			if life <= 0 {
				return oauth.Auth{}, fmt.Errorf("OAUTHBEARER: the token expired at %s", exp.UTC().Format(time.RFC3339))
			}
			s.token = tok
			s.refresh = now.Add(time.Duration(float64(life) * s.window))
			return oauth.Auth{Token: tok, Extensions: s.extensions}, nil
		}
		var perm *permanentError
		if errors.As(err, &perm) || attempt >= 3 {
			return oauth.Auth{}, err
		}
		select {
		case <-ctx.Done():
			return oauth.Auth{}, fmt.Errorf("%w (then %v)", err, ctx.Err())
		case <-time.After(backoff + time.Duration(rand.Int64N(int64(backoff/4)+1))):
		}
		backoff = min(2*backoff, s.backoffMax)
	}
}

// permanentError is a token endpoint's refusal, which retrying does not
// change.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// clientCredentials asks the token endpoint for a token, as Kafka's
// HttpAccessTokenRetriever does: POST grant_type=client_credentials (and
// scope) with the client's id and secret as HTTP basic credentials; the
// answer's access_token (and expires_in, else the JWT's exp).
func clientCredentials(ctx context.Context, client *http.Client, endpoint, id, secret, scope string, now time.Time) (string, time.Time, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
	resp, err := client.Do(req)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("OAUTHBEARER token endpoint %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		err := fmt.Errorf("OAUTHBEARER token endpoint %s answered %s: %s", endpoint, resp.Status, clip(string(body), 200))
		if resp.StatusCode/100 == 4 {
			return "", time.Time{}, &permanentError{err}
		}
		return "", time.Time{}, err
	}
	var tr struct {
		AccessToken string          `json:"access_token"`
		ExpiresIn   json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" {
		return "", time.Time{}, &permanentError{fmt.Errorf("OAUTHBEARER token endpoint %s: no access_token in its answer", endpoint)}
	}
	exp := jwtExpiry(tr.AccessToken, now)
	if n, err := strconv.ParseFloat(strings.Trim(string(tr.ExpiresIn), `"`), 64); err == nil && n > 0 {
		exp = now.Add(time.Duration(n * float64(time.Second)))
	}
	return tr.AccessToken, exp, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// jwtExpiry is a JWT's exp claim, or an hour from now for a token that is
// not a JWT or has none.
func jwtExpiry(tok string, now time.Time) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) == 3 {
		if b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "=")); err == nil {
			var claims struct {
				Exp float64 `json:"exp"`
			}
			if json.Unmarshal(b, &claims) == nil && claims.Exp > 0 {
				return time.Unix(int64(claims.Exp), 0)
			}
		}
	}
	return now.Add(time.Hour)
}

// unsecuredJWT is Kafka's OAuthBearerUnsecuredLoginCallbackHandler: an
// unsigned JWT ("alg":"none") with the sub, iat and exp claims and the
// unsecuredLoginStringClaim_*, …NumberClaim_* and …ListClaim_* options;
// unsecuredLoginLifetimeSeconds (3600 by default).
func unsecuredJWT(opts map[string]string, now time.Time) (string, time.Time, error) {
	life := 3600.0
	if v, ok := opts["unsecuredLoginLifetimeSeconds"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return "", time.Time{}, errors.New("sasl.jaas.config: unsecuredLoginLifetimeSeconds must be a positive number")
		}
		life = f
	}
	claims := map[string]any{}
	for k, v := range opts {
		switch {
		case strings.HasPrefix(k, "unsecuredLoginStringClaim_"):
			claims[strings.TrimPrefix(k, "unsecuredLoginStringClaim_")] = v
		case strings.HasPrefix(k, "unsecuredLoginNumberClaim_"):
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return "", time.Time{}, fmt.Errorf("sasl.jaas.config: %s is not a number", k)
			}
			claims[strings.TrimPrefix(k, "unsecuredLoginNumberClaim_")] = n
		case strings.HasPrefix(k, "unsecuredLoginListClaim_"):
			// Kafka: the first character is the separator.
			var list []string
			if len(v) > 0 {
				for _, e := range strings.Split(v[1:], v[:1]) {
					if e != "" {
						list = append(list, e)
					}
				}
			}
			claims[strings.TrimPrefix(k, "unsecuredLoginListClaim_")] = list
		}
	}
	exp := now.Add(time.Duration(life * float64(time.Second)))
	claims["iat"] = float64(now.UnixMilli()) / 1000
	claims["exp"] = float64(exp.UnixMilli()) / 1000
	header, _ := json.Marshal(map[string]string{"alg": "none"})
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", time.Time{}, err
	}
	return base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload) + ".", exp, nil
}
