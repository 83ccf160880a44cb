package kafkaauth

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// This file holds what MSK IAM authentication needs of AWS, without the
// AWS SDK (which would add a few MB and many package inits to every
// process of the tributary binary): the default credential chain, STS
// role assumption, and Signature Version 4.

// awsCreds are AWS credentials.
type awsCreds struct {
	AccessKeyID, SecretAccessKey, SessionToken string
	Expires                                    time.Time // zero: does not expire
}

// awsCredentials retrieves and caches credentials (refreshed five minutes
// before they expire).
type awsCredentials struct {
	get func(ctx context.Context) (awsCreds, error)
	now func() time.Time

	mu     sync.Mutex
	cached awsCreds
}

func (c *awsCredentials) retrieve(ctx context.Context) (awsCreds, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cached.AccessKeyID != "" && (c.cached.Expires.IsZero() || c.now().Add(5*time.Minute).Before(c.cached.Expires)) {
		return c.cached, nil
	}
	cr, err := c.get(ctx)
	if err != nil {
		return awsCreds{}, err
	}
	c.cached = cr
	return cr, nil
}

// env looks a variable up in environ.
func envLookup(environ []string, k string) string {
	for i := len(environ) - 1; i >= 0; i-- {
		if name, v, ok := strings.Cut(environ[i], "="); ok && name == k {
			return v
		}
	}
	return ""
}

func awsRegion(environ []string) string {
	if r := envLookup(environ, "AWS_REGION"); r != "" {
		return r
	}
	return envLookup(environ, "AWS_DEFAULT_REGION")
}

// newAWSCredentials reads aws-msk-iam-auth's JAAS options: awsProfileName
// (a profile of the shared credentials file), awsRoleArn (a role assumed
// through STS, with awsRoleSessionName, awsRoleExternalId, awsStsRegion,
// and awsRoleAccessKeyId/awsRoleSecretAccessKey/awsRoleSessionToken as the
// credentials that assume it); without them, the AWS default chain.
func newAWSCredentials(opts map[string]string, environ []string, client *http.Client) (*awsCredentials, error) {
	base := func(ctx context.Context) (awsCreds, error) { return defaultChain(ctx, environ, client) }
	if p := opts["awsProfileName"]; p != "" {
		base = func(context.Context) (awsCreds, error) { return sharedCredentials(environ, p) }
	}
	if id := opts["awsRoleAccessKeyId"]; id != "" {
		static := awsCreds{AccessKeyID: id, SecretAccessKey: opts["awsRoleSecretAccessKey"], SessionToken: opts["awsRoleSessionToken"]}
		if static.SecretAccessKey == "" {
			return nil, errors.New("sasl.jaas.config: awsRoleAccessKeyId needs awsRoleSecretAccessKey")
		}
		base = func(context.Context) (awsCreds, error) { return static, nil }
	}
	get := base
	if arn := opts["awsRoleArn"]; arn != "" {
		session := opts["awsRoleSessionName"]
		if session == "" {
			session = fmt.Sprintf("aws-msk-iam-auth-%d", time.Now().UnixMilli())
		}
		region := opts["awsStsRegion"]
		if region == "" {
			region = "us-east-1"
		}
		ext := opts["awsRoleExternalId"]
		get = func(ctx context.Context) (awsCreds, error) {
			b, err := base(ctx)
			if err != nil {
				return awsCreds{}, err
			}
			form := url.Values{"Action": {"AssumeRole"}, "Version": {"2011-06-15"}, "RoleArn": {arn}, "RoleSessionName": {session}}
			if ext != "" {
				form.Set("ExternalId", ext)
			}
			return stsCall(ctx, client, region, form, &b, time.Now())
		}
	}
	return &awsCredentials{get: get, now: time.Now}, nil
}

// defaultChain is the AWS SDKs' default credential chain: the environment,
// the shared credentials file, a web identity token (EKS), the container
// credentials endpoint (ECS, EKS Pod Identity), then EC2's instance
// metadata (IMDSv2; AWS_EC2_METADATA_DISABLED=true skips it).
func defaultChain(ctx context.Context, environ []string, client *http.Client) (awsCreds, error) {
	if id := envLookup(environ, "AWS_ACCESS_KEY_ID"); id != "" {
		secret := envLookup(environ, "AWS_SECRET_ACCESS_KEY")
		if secret == "" {
			return awsCreds{}, errors.New("AWS_ACCESS_KEY_ID is set without AWS_SECRET_ACCESS_KEY")
		}
		return awsCreds{AccessKeyID: id, SecretAccessKey: secret, SessionToken: envLookup(environ, "AWS_SESSION_TOKEN")}, nil
	}
	profile := envLookup(environ, "AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	if c, err := sharedCredentials(environ, profile); err == nil {
		return c, nil
	}
	if tokenFile, arn := envLookup(environ, "AWS_WEB_IDENTITY_TOKEN_FILE"), envLookup(environ, "AWS_ROLE_ARN"); tokenFile != "" && arn != "" {
		tok, err := os.ReadFile(tokenFile)
		if err != nil {
			return awsCreds{}, fmt.Errorf("AWS web identity token: %w", err)
		}
		session := envLookup(environ, "AWS_ROLE_SESSION_NAME")
		if session == "" {
			session = fmt.Sprintf("tributary-%d", time.Now().UnixMilli())
		}
		region := awsRegion(environ)
		if region == "" {
			region = "us-east-1"
		}
		form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"}, "RoleArn": {arn},
			"RoleSessionName": {session}, "WebIdentityToken": {strings.TrimSpace(string(tok))}}
		return stsCall(ctx, client, region, form, nil, time.Now())
	}
	if rel := envLookup(environ, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
		return containerCredentials(ctx, client, "http://169.254.170.2"+rel, "")
	}
	if full := envLookup(environ, "AWS_CONTAINER_CREDENTIALS_FULL_URI"); full != "" {
		auth := envLookup(environ, "AWS_CONTAINER_AUTHORIZATION_TOKEN")
		if f := envLookup(environ, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); f != "" {
			b, err := os.ReadFile(f)
			if err != nil {
				return awsCreds{}, fmt.Errorf("AWS container authorization token: %w", err)
			}
			auth = strings.TrimSpace(string(b))
		}
		return containerCredentials(ctx, client, full, auth)
	}
	if strings.EqualFold(envLookup(environ, "AWS_EC2_METADATA_DISABLED"), "true") {
		return awsCreds{}, errors.New("no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), the shared credentials file, a web identity token or a container endpoint, and instance metadata is disabled")
	}
	c, err := instanceCredentials(ctx, client, environ)
	if err != nil {
		return awsCreds{}, fmt.Errorf("no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), the shared credentials file, a web identity token or a container endpoint, and instance metadata: %w", err)
	}
	return c, nil
}

// sharedCredentials reads a profile of the shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials).
func sharedCredentials(environ []string, profile string) (awsCreds, error) {
	path := envLookup(environ, "AWS_SHARED_CREDENTIALS_FILE")
	if path == "" {
		home := envLookup(environ, "HOME")
		if home == "" {
			return awsCreds{}, errors.New("no shared credentials file (HOME is not set)")
		}
		path = filepath.Join(home, ".aws", "credentials")
	}
	f, err := os.Open(path)
	if err != nil {
		return awsCreds{}, fmt.Errorf("AWS shared credentials: %w", err)
	}
	defer f.Close()
	var section string
	vals := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && strings.HasSuffix(line, "]"):
			section = strings.TrimSpace(line[1 : len(line)-1])
		case section == profile:
			if k, v, ok := strings.Cut(line, "="); ok {
				vals[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	c := awsCreds{AccessKeyID: vals["aws_access_key_id"], SecretAccessKey: vals["aws_secret_access_key"], SessionToken: vals["aws_session_token"]}
	if c.AccessKeyID == "" || c.SecretAccessKey == "" {
		return awsCreds{}, fmt.Errorf("AWS shared credentials %s: no aws_access_key_id and aws_secret_access_key in profile %s", path, profile)
	}
	return c, nil
}

// endpointCreds is the JSON of the container and instance endpoints.
type endpointCreds struct {
	AccessKeyID     string    `json:"AccessKeyId"`
	SecretAccessKey string    `json:"SecretAccessKey"`
	Token           string    `json:"Token"`
	Expiration      time.Time `json:"Expiration"`
}

func getJSON(ctx context.Context, client *http.Client, method, u string, headers map[string]string, into any) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: %s", method, u, resp.Status)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, u, err)
		}
	}
	return b, nil
}

func containerCredentials(ctx context.Context, client *http.Client, u, auth string) (awsCreds, error) {
	var ec endpointCreds
	h := map[string]string{}
	if auth != "" {
		h["Authorization"] = auth
	}
	if _, err := getJSON(ctx, client, http.MethodGet, u, h, &ec); err != nil {
		return awsCreds{}, fmt.Errorf("AWS container credentials: %w", err)
	}
	return awsCreds{AccessKeyID: ec.AccessKeyID, SecretAccessKey: ec.SecretAccessKey, SessionToken: ec.Token, Expires: ec.Expiration}, nil
}

func instanceCredentials(ctx context.Context, client *http.Client, environ []string) (awsCreds, error) {
	base := envLookup(environ, "AWS_EC2_METADATA_SERVICE_ENDPOINT")
	if base == "" {
		base = "http://169.254.169.254"
	}
	base = strings.TrimSuffix(base, "/")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	tok, err := getJSON(ctx, client, http.MethodPut, base+"/latest/api/token", map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "21600"}, nil)
	if err != nil {
		return awsCreds{}, err
	}
	h := map[string]string{"X-aws-ec2-metadata-token": string(tok)}
	role, err := getJSON(ctx, client, http.MethodGet, base+"/latest/meta-data/iam/security-credentials/", h, nil)
	if err != nil {
		return awsCreds{}, err
	}
	var ec endpointCreds
	name := strings.TrimSpace(strings.SplitN(string(role), "\n", 2)[0])
	if _, err := getJSON(ctx, client, http.MethodGet, base+"/latest/meta-data/iam/security-credentials/"+url.PathEscape(name), h, &ec); err != nil {
		return awsCreds{}, err
	}
	return awsCreds{AccessKeyID: ec.AccessKeyID, SecretAccessKey: ec.SecretAccessKey, SessionToken: ec.Token, Expires: ec.Expiration}, nil
}

// stsCall posts an STS query action (signed with signer's credentials
// unless nil) and reads the Credentials of its answer.
func stsCall(ctx context.Context, client *http.Client, region string, form url.Values, signer *awsCreds, now time.Time) (awsCreds, error) {
	host := "sts." + region + ".amazonaws.com"
	body := form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+host+"/", strings.NewReader(body))
	if err != nil {
		return awsCreds{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	if signer != nil {
		signHeaders(req, []byte(body), *signer, region, "sts", now)
	}
	resp, err := client.Do(req)
	if err != nil {
		return awsCreds{}, fmt.Errorf("AWS STS %s: %w", form.Get("Action"), err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return awsCreds{}, fmt.Errorf("AWS STS %s of %s: %s: %s", form.Get("Action"), form.Get("RoleArn"), resp.Status, clip(string(b), 300))
	}
	var out struct {
		Creds struct {
			AccessKeyID     string    `xml:"AccessKeyId"`
			SecretAccessKey string    `xml:"SecretAccessKey"`
			SessionToken    string    `xml:"SessionToken"`
			Expiration      time.Time `xml:"Expiration"`
		} `xml:"Result>Credentials"`
	}
	// The result element is named after the action (AssumeRoleResult…).
	s := strings.ReplaceAll(string(b), form.Get("Action")+"Result>", "Result>")
	if err := xml.Unmarshal([]byte(s), &out); err != nil || out.Creds.AccessKeyID == "" {
		return awsCreds{}, fmt.Errorf("AWS STS %s: no credentials in the answer", form.Get("Action"))
	}
	return awsCreds{AccessKeyID: out.Creds.AccessKeyID, SecretAccessKey: out.Creds.SecretAccessKey, SessionToken: out.Creds.SessionToken, Expires: out.Creds.Expiration}, nil
}

// Signature Version 4.

const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// uriEncode is SigV4's encoding: every byte but A-Z a-z 0-9 - _ . ~
// percent-encoded, in upper case.
func uriEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// canonicalQuery sorts and encodes q as SigV4 wants.
func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		vs := append([]string(nil), q[k]...)
		sort.Strings(vs)
		for _, v := range vs {
			parts = append(parts, uriEncode(k)+"="+uriEncode(v))
		}
	}
	return strings.Join(parts, "&")
}

func hmacSHA256(key []byte, s string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(s))
	return h.Sum(nil)
}

// signature computes a SigV4 signature of a canonical request.
func signature(secret, region, service, amzDate, canonicalRequest string) string {
	date := amzDate[:8]
	scope := date + "/" + region + "/" + service + "/aws4_request"
	h := sha256.Sum256([]byte(canonicalRequest))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(h[:])
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	k = hmacSHA256(k, "aws4_request")
	return hex.EncodeToString(hmacSHA256(k, toSign))
}

// presign signs GET https://host/ with query (plus the X-Amz-* parameters)
// for expires, signing only the host header, and returns the signed query.
func presign(host string, query url.Values, c awsCreds, region, service string, now time.Time, expires time.Duration) url.Values {
	amzDate := now.UTC().Format("20060102T150405Z")
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Credential", c.AccessKeyID+"/"+amzDate[:8]+"/"+region+"/"+service+"/aws4_request")
	q.Set("X-Amz-Date", amzDate)
	q.Set("X-Amz-Expires", fmt.Sprint(int(expires.Seconds())))
	q.Set("X-Amz-SignedHeaders", "host")
	if c.SessionToken != "" {
		q.Set("X-Amz-Security-Token", c.SessionToken)
	}
	canonical := "GET\n/\n" + canonicalQuery(q) + "\nhost:" + host + "\n\nhost\n" + emptySHA256
	q.Set("X-Amz-Signature", signature(c.SecretAccessKey, region, service, amzDate, canonical))
	return q
}

// signHeaders signs req (whose body is body) with an Authorization header.
func signHeaders(req *http.Request, body []byte, c awsCreds, region, service string, now time.Time) {
	amzDate := now.UTC().Format("20060102T150405Z")
	sum := sha256.Sum256(body)
	payload := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Date", amzDate)
	if c.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", c.SessionToken)
	}
	headers := map[string]string{"host": req.URL.Host}
	for k, v := range req.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sort.Strings(names)
	var canonHeaders strings.Builder
	for _, k := range names {
		canonHeaders.WriteString(k + ":" + strings.TrimSpace(headers[k]) + "\n")
	}
	signed := strings.Join(names, ";")
	path := req.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	canonical := req.Method + "\n" + path + "\n" + canonicalQuery(req.URL.Query()) + "\n" + canonHeaders.String() + "\n" + signed + "\n" + payload
	sig := signature(c.SecretAccessKey, region, service, amzDate, canonical)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.AccessKeyID+"/"+amzDate[:8]+"/"+region+"/"+service+"/aws4_request, SignedHeaders="+signed+", Signature="+sig)
}

// mskTokenSource makes the OAUTHBEARER tokens of aws-msk-iam-auth's
// IAMOAuthBearerLoginCallbackHandler (and aws-msk-iam-sasl-signer-go): a
// presigned "kafka-cluster:Connect" request to kafka.REGION.amazonaws.com,
// valid 15 minutes, as unpadded base64url.
type mskTokenSource struct {
	creds  *awsCredentials
	region string
	now    func() time.Time

	mu      sync.Mutex
	token   string
	refresh time.Time
}

func newMSKTokenSource(creds *awsCredentials, region string) *mskTokenSource {
	return &mskTokenSource{creds: creds, region: region, now: time.Now}
}

func (m *mskTokenSource) auth(ctx context.Context) (oauth.Auth, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.token != "" && now.Before(m.refresh) {
		return oauth.Auth{Token: m.token}, nil
	}
	c, err := m.creds.retrieve(ctx)
	if err != nil {
		return oauth.Auth{}, err
	}
	m.token = mskToken(c, m.region, now)
	m.refresh = now.Add(12 * time.Minute) // 80% of the token's 15 minutes
	return oauth.Auth{Token: m.token}, nil
}

// mskToken is the signed MSK IAM OAUTHBEARER token for c at now.
func mskToken(c awsCreds, region string, now time.Time) string {
	host := "kafka." + region + ".amazonaws.com"
	q := presign(host, url.Values{"Action": {"kafka-cluster:Connect"}}, c, region, "kafka-cluster", now, 15*time.Minute)
	q.Set("User-Agent", "tributary")
	u := url.URL{Scheme: "https", Host: host, Path: "/", RawQuery: q.Encode()}
	return base64.RawURLEncoding.EncodeToString([]byte(u.String()))
}
