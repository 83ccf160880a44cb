package restapi

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Answers to request paths Kafka Connect 4.4 (Jetty 12's default URI
// compliance) refuses with a 400, by their Jetty message.
const (
	ambiguousSeparator = "Ambiguous URI path separator" // an encoded '/'
	ambiguousEncoding  = "Ambiguous URI path encoding"  // an encoded '%'
	ambiguousSegment   = "Ambiguous URI path segment"   // a "." or ".." segment
	ambiguousEmpty     = "Ambiguous URI empty segment"  // "//"
	suspiciousChar     = "Suspicious Path Character"    // '\' or a control character
	badPath            = "Bad Request"                  // NUL
	badUTF8            = "Bad UTF-8 encoding"           // e.g. %FF
)

// decodePaths decodes the request path exactly once, before routing, and
// refuses with Kafka Connect's 400 what Kafka Connect's Jetty refuses: an
// encoded '/' or '%' (whose meaning depends on how often a server decodes),
// "." and ".." segments, empty segments, backslashes and control
// characters, and bytes that are not UTF-8 (which would otherwise reach a
// plugin as an unmarshalable gRPC string: a 500). Path parameters (";…" in a segment) are dropped, as Jetty
// drops them. Routing then runs on the decoded path, in which no segment
// can hold a '/', so the handlers' path parameters are the decoded
// segments as they are: /connectors/victim%252Fx names the connector
// "victim%2Fx" (here: a 400, as in Kafka Connect), never "victim/x".
func decodePaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		decoded, problem := decodePath(r.URL.EscapedPath())
		if problem != "" {
			badRequest(w, problem)
			return
		}
		if decoded != r.URL.Path || r.URL.RawPath != "" {
			u := *r.URL
			u.Path, u.RawPath = decoded, ""
			r2 := *r
			r2.URL = &u
			r = &r2
		}
		next.ServeHTTP(w, r)
	})
}

// decodePath decodes an escaped path segment by segment, or says why
// Kafka Connect would refuse it.
func decodePath(escaped string) (string, string) {
	segs := strings.Split(escaped, "/")
	for i, seg := range segs {
		if i == 0 {
			continue // before the leading '/'
		}
		if seg == "" {
			if i == len(segs)-1 {
				continue // a trailing slash (Jersey ignores it)
			}
			return "", ambiguousEmpty
		}
		if j := strings.IndexByte(seg, ';'); j >= 0 {
			seg = seg[:j]
		}
		if strings.IndexByte(seg, '\\') >= 0 {
			return "", suspiciousChar
		}
		lower := strings.ToLower(seg)
		if strings.Contains(lower, "%2f") {
			return "", ambiguousSeparator
		}
		if strings.Contains(lower, "%25") {
			return "", ambiguousEncoding
		}
		d, err := url.PathUnescape(seg)
		if err != nil {
			return "", badPath
		}
		if d == "." || d == ".." {
			return "", ambiguousSegment
		}
		if !utf8.ValidString(d) {
			return "", badUTF8
		}
		for k := 0; k < len(d); k++ {
			switch c := d[k]; {
			case c == 0:
				return "", badPath
			case c < 0x20 || c == 0x7f || c == '\\':
				return "", suspiciousChar
			}
		}
		segs[i] = d
	}
	return strings.Join(segs, "/"), ""
}
