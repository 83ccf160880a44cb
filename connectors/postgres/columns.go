package postgres

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"golang.org/x/crypto/sha3"
)

// Column transformations, with Debezium's names and rules: per column (a
// regular expression over schema.table.column, whole and
// case-insensitive) or per type (datatype.propagate.source.type, over
// schema.table.type), the first rule that matches a column is its only
// one, in the order Debezium tries them: truncate, mask, propagate source
// type (by column, then by type), hash, hash v2. They apply to snapshot,
// incremental snapshot and streamed values alike.
//
//   - column.truncate.to.<n>.chars: strings longer than n are cut (the
//     field gets the parameter truncateLength=n), unless the column's
//     length is at most n.
//   - column.mask.with.<n>.chars: string values become n asterisks
//     (parameter masked=true).
//   - column.mask.hash.<algorithm>.with.salt.<salt>: string values become
//     the hex digest of the salt and the value, cut to the column's length;
//     the value hashed is its Java serialization (Debezium's v1), or with
//     column.mask.hash.v2.… its UTF-8 bytes.
//   - column.propagate.source.type, datatype.propagate.source.type: the
//     field gets the parameters __debezium.source.column.type, .length,
//     .scale and .name.
//
// message.key.columns (schema.table:col[,col][;…]) picks the key columns of
// a table instead of its primary key.

type columnRuleKind int

const (
	ruleTruncate columnRuleKind = iota
	ruleMask
	rulePropagate
	rulePropagateType
	ruleHash
	ruleHashV2
)

// columnRule is one transformation and the columns it applies to.
type columnRule struct {
	kind     columnRuleKind
	patterns []*regexp.Regexp
	n        int    // truncate and mask
	alg      string // hash
	salt     []byte
}

// columnRules are a connector's column transformations and key columns.
type columnRules struct {
	rules []columnRule
	keys  []keyColumns
}

// keyColumns is an entry of message.key.columns.
type keyColumns struct {
	table   *regexp.Regexp
	columns []string
}

var (
	truncateKey = regexp.MustCompile(`^column\.truncate\.to\.(\d+)\.chars$`)
	maskKey     = regexp.MustCompile(`^column\.mask\.with\.(\d+)\.chars$`)
	hashKey     = regexp.MustCompile(`^column\.mask\.hash\.(v2\.)?([^.]+)\.with\.salt\.(.+)$`)
)

// isColumnRuleKey reports whether k is one of the dynamic keys of the
// column transformations.
func isColumnRuleKey(k string) bool {
	return truncateKey.MatchString(k) || maskKey.MatchString(k) || hashKey.MatchString(k)
}

// newHash returns the digest of a Java MessageDigest algorithm name.
func newHash(alg string) (func() hash.Hash, error) {
	switch strings.ToUpper(alg) {
	case "MD5":
		return md5.New, nil
	case "SHA-1", "SHA1", "SHA":
		return sha1.New, nil
	case "SHA-224":
		return sha256.New224, nil
	case "SHA-256":
		return sha256.New, nil
	case "SHA-384":
		return sha512.New384, nil
	case "SHA-512":
		return sha512.New, nil
	case "SHA-512/224":
		return sha512.New512_224, nil
	case "SHA-512/256":
		return sha512.New512_256, nil
	case "SHA3-224":
		return sha3.New224, nil
	case "SHA3-256":
		return sha3.New256, nil
	case "SHA3-384":
		return sha3.New384, nil
	case "SHA3-512":
		return sha3.New512, nil
	}
	return nil, fmt.Errorf("hash algorithm %q is not one of MD5, SHA-1, SHA-224, SHA-256, SHA-384, SHA-512, SHA-512/224, SHA-512/256, SHA3-224, SHA3-256, SHA3-384, SHA3-512", alg)
}

// compilePatterns compiles a comma-separated list of whole-name,
// case-insensitive regular expressions.
func compilePatterns(list string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		re, err := regexp.Compile("(?i)^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %v", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// parseColumnRules reads the column transformations and message.key.columns
// from a raw configuration; errs holds a message per bad key.
func parseColumnRules(raw map[string]string) (*columnRules, map[string]string) {
	cr := &columnRules{}
	errs := map[string]string{}
	type pending struct {
		key  string
		rule columnRule
	}
	var byKind [ruleHashV2 + 1][]pending
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		var r columnRule
		switch {
		case truncateKey.MatchString(k):
			n, err := strconv.Atoi(truncateKey.FindStringSubmatch(k)[1])
			if err != nil {
				errs[k] = "the length is not a number"
				continue
			}
			r = columnRule{kind: ruleTruncate, n: n}
		case maskKey.MatchString(k):
			n, err := strconv.Atoi(maskKey.FindStringSubmatch(k)[1])
			if err != nil {
				errs[k] = "the length is not a number"
				continue
			}
			r = columnRule{kind: ruleMask, n: n}
		case hashKey.MatchString(k):
			m := hashKey.FindStringSubmatch(k)
			if _, err := newHash(m[2]); err != nil {
				errs[k] = err.Error()
				continue
			}
			r = columnRule{kind: ruleHash, alg: m[2], salt: []byte(m[3])}
			if m[1] != "" {
				r.kind = ruleHashV2
			}
		case k == "column.propagate.source.type":
			r = columnRule{kind: rulePropagate}
		case k == "datatype.propagate.source.type":
			r = columnRule{kind: rulePropagateType}
		case k == "message.key.columns":
			keys, err := parseKeyColumns(v)
			if err != nil {
				errs[k] = err.Error()
			}
			cr.keys = keys
			continue
		default:
			continue
		}
		pats, err := compilePatterns(v)
		if err != nil {
			errs[k] = err.Error()
			continue
		}
		r.patterns = pats
		byKind[r.kind] = append(byKind[r.kind], pending{k, r})
	}
	for _, rs := range byKind {
		for _, p := range rs {
			cr.rules = append(cr.rules, p.rule)
		}
	}
	return cr, errs
}

// parseKeyColumns parses message.key.columns: table:col,col;table:col.
func parseKeyColumns(v string) ([]keyColumns, error) {
	var out []keyColumns
	for _, entry := range strings.Split(v, ";") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		i := strings.LastIndex(entry, ":")
		if i <= 0 || i == len(entry)-1 {
			return nil, fmt.Errorf("%q is not <schema>.<table>:<column>[,<column>]", entry)
		}
		re, err := regexp.Compile("(?i)^(?:" + strings.TrimSpace(entry[:i]) + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression %q: %v", entry[:i], err)
		}
		var cols []string
		for _, c := range strings.Split(entry[i+1:], ",") {
			if c = strings.TrimSpace(c); c != "" {
				cols = append(cols, c)
			}
		}
		if len(cols) == 0 {
			return nil, fmt.Errorf("%q names no column", entry)
		}
		out = append(out, keyColumns{table: re, columns: cols})
	}
	return out, nil
}

// rule returns the rule of a column (nil: none).
func (cr *columnRules) rule(id tableID, col *column, typeName string) *columnRule {
	if cr == nil {
		return nil
	}
	name := id.String() + "." + col.name
	byType := id.String() + "." + typeName
	for i := range cr.rules {
		r := &cr.rules[i]
		target := name
		if r.kind == rulePropagateType {
			target = byType
		}
		if slices.ContainsFunc(r.patterns, func(re *regexp.Regexp) bool { return re.MatchString(target) }) {
			return r
		}
	}
	return nil
}

// keyFor returns the key columns message.key.columns gives a table (nil:
// its primary key).
func (cr *columnRules) keyFor(id tableID) []string {
	if cr == nil {
		return nil
	}
	for _, k := range cr.keys {
		if k.table.MatchString(id.String()) {
			return k.columns
		}
	}
	return nil
}

// stringType reports whether a PostgreSQL type is one Debezium's string
// mappers act on (JDBC CHAR, VARCHAR and the like).
func stringType(typname string) bool {
	switch typname {
	case "text", "varchar", "bpchar", "char", "name", "citext":
		return true
	}
	return false
}

// columnLength returns a column's length as Debezium reports it (the
// type modifier's, else the JDBC driver's default precision), -1 when
// unset; and its scale, ok false when it has none.
func columnLength(typname string, typmod int32) (length int, scale int, hasScale bool) {
	switch typname {
	case "varchar", "bpchar":
		if typmod >= 4 {
			return int(typmod - 4), 0, true
		}
		return 2147483647, 0, true
	case "numeric":
		if typmod >= 4 {
			return int((typmod - 4) >> 16 & 0xffff), int((typmod - 4) & 0xffff), true
		}
		return 0, 0, true
	case "text", "bytea", "json", "jsonb", "xml":
		return 2147483647, 0, true
	case "int2":
		return 5, 0, true
	case "int4", "oid":
		return 10, 0, true
	case "int8":
		return 19, 0, true
	case "float4":
		return 8, 8, true
	case "float8":
		return 17, 17, true
	case "bool":
		return 1, 0, true
	case "date":
		return 13, 0, true
	case "time", "timetz", "timestamp", "timestamptz":
		p := 6
		if typmod >= 0 {
			p = int(typmod)
		}
		base := map[string]int{"time": 8, "timetz": 14, "timestamp": 19, "timestamptz": 25}[typname]
		if p > 0 {
			base += 1 + p
		}
		return base, p, true
	case "uuid":
		return 2147483647, 0, true
	}
	return 2147483647, 0, true
}

// apply sets a column's transformation: its converter's decoders and its
// field's schema parameters.
func (r *columnRule) apply(col *column, typname string) {
	conv := col.conv
	length, scale, hasScale := columnLength(typname, col.typmod)
	withParams := func(kv ...string) {
		s := *col.schema
		s.Parameters = maps.Clone(s.Parameters)
		if s.Parameters == nil {
			s.Parameters = map[string]string{}
		}
		for i := 0; i < len(kv); i += 2 {
			s.Parameters[kv[i]] = kv[i+1]
		}
		col.schema = &s
	}
	var fn func(any) any
	switch r.kind {
	case ruleTruncate:
		if length >= 0 && length <= r.n {
			return
		}
		withParams("truncateLength", strconv.Itoa(r.n))
		n := r.n
		fn = func(v any) any {
			switch x := v.(type) {
			case string:
				if u := utf16.Encode([]rune(x)); len(u) > n {
					return string(utf16.Decode(u[:n]))
				}
			case []byte:
				if len(x) > n {
					return x[:n]
				}
			}
			return v
		}
	case ruleMask, ruleHash, ruleHashV2:
		withParams("masked", "true")
		if !stringType(typname) {
			return
		}
		if r.kind == ruleMask {
			mask := strings.Repeat("*", r.n)
			fn = func(any) any { return mask } // a NULL too, as Debezium's mask does
			break
		}
		newH, _ := newHash(r.alg)
		salt, v2 := r.salt, r.kind == ruleHashV2
		fn = func(v any) any {
			s, ok := v.(string)
			if !ok {
				return v
			}
			h := newH()
			h.Write(salt)
			if v2 {
				h.Write([]byte(s))
			} else {
				h.Write(javaSerializedString(s))
			}
			out := hex.EncodeToString(h.Sum(nil))
			if length > 0 && len(out) > length {
				out = out[:length]
			}
			return out
		}
	case rulePropagate, rulePropagateType:
		kv := []string{"__debezium.source.column.type", strings.ToUpper(typname)}
		if length >= 0 {
			kv = append(kv, "__debezium.source.column.length", strconv.Itoa(length))
		}
		if hasScale {
			kv = append(kv, "__debezium.source.column.scale", strconv.Itoa(scale))
		}
		kv = append(kv, "__debezium.source.column.name", col.name)
		withParams(kv...)
		return
	}
	if fn == nil || conv == nil {
		return
	}
	wrap := func(dec decodeFunc) decodeFunc {
		if dec == nil {
			return nil
		}
		return func(b []byte) (any, error) {
			v, err := dec(b)
			if err != nil {
				return nil, err
			}
			return fn(v), nil
		}
	}
	nc := *conv
	nc.decode, nc.snapshot = wrap(conv.decode), wrap(conv.snapshot)
	nc.text = false
	nc.null = fn(nil)
	if s, ok := nc.toast.(string); ok {
		nc.toast = fn(s)
	}
	col.conv = &nc
}

// javaSerializedString is a string as java.io.ObjectOutputStream writes it
// (what Debezium's v1 hashing digests): the stream header, then TC_STRING
// and a two-byte length, or TC_LONGSTRING and an eight-byte one, and the
// string in modified UTF-8.
func javaSerializedString(s string) []byte {
	var mu []byte
	for _, u := range utf16.Encode([]rune(s)) {
		switch {
		case u != 0 && u < 0x80:
			mu = append(mu, byte(u))
		case u < 0x800:
			mu = append(mu, byte(0xc0|u>>6), byte(0x80|u&0x3f))
		default:
			mu = append(mu, byte(0xe0|u>>12), byte(0x80|u>>6&0x3f), byte(0x80|u&0x3f))
		}
	}
	out := []byte{0xac, 0xed, 0x00, 0x05}
	if len(mu) <= 0xffff {
		out = append(out, 0x74)
		out = binary.BigEndian.AppendUint16(out, uint16(len(mu)))
	} else {
		out = append(out, 0x7c)
		out = binary.BigEndian.AppendUint64(out, uint64(len(mu)))
	}
	return append(out, mu...)
}
