package kafkarest

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// aclFilter is the filter of the v3 ACL search and delete: nil strings
// match any value.
type aclFilter struct {
	ResourceType kmsg.ACLResourceType
	ResourceName *string
	Pattern      kmsg.ACLResourcePatternType
	Principal    *string
	Host         *string
	Operation    kmsg.ACLOperation
	Permission   kmsg.ACLPermissionType
}

// aclEntry is one ACL as the v3 API names it.
type aclEntry struct {
	ResourceType string `json:"resource_type"`
	ResourceName string `json:"resource_name"`
	PatternType  string `json:"pattern_type"`
	Principal    string `json:"principal"`
	Host         string `json:"host"`
	Operation    string `json:"operation"`
	Permission   string `json:"permission"`
}

// aclEnum parses one enum value of the ACL API: Confluent's names,
// case-insensitively; "" is def. UNKNOWN is never accepted.
func aclEnum[T ~int8](field, s, def string, parse func(string) (T, error)) (T, *Error) {
	if s == "" {
		s = def
	}
	v, err := parse(s)
	if err != nil || v == 0 {
		return 0, badRequest("%s: %q is not a valid value", field, s)
	}
	return v, nil
}

// aclFields are an ACL's seven fields as a request spells them, nil where
// one is left out: the query of GET and DELETE /acls, a body of POST.
type aclFields struct {
	ResourceType *string `json:"resource_type"`
	ResourceName *string `json:"resource_name"`
	PatternType  *string `json:"pattern_type"`
	Principal    *string `json:"principal"`
	Host         *string `json:"host"`
	Operation    *string `json:"operation"`
	Permission   *string `json:"permission"`
}

// parseACL checks an ACL's fields. A filter's may be left out, a string
// then matching any value and an enum being ANY; a creation's are all
// required, and none of its enums may be a wildcard (ANY, MATCH).
func parseACL(in aclFields, filter bool) (aclFilter, *Error) {
	var f aclFilter
	def := "ANY"
	if !filter {
		def = ""
		for _, fl := range []struct {
			name string
			v    *string
		}{{"resource_type", in.ResourceType}, {"resource_name", in.ResourceName}, {"pattern_type", in.PatternType},
			{"principal", in.Principal}, {"host", in.Host}, {"operation", in.Operation}, {"permission", in.Permission}} {
			if fl.v == nil || *fl.v == "" {
				return f, unprocessable("%s: must not be null or empty", fl.name)
			}
		}
	}
	var err *Error
	if f.ResourceType, err = aclEnum("resource_type", deref(in.ResourceType), def, kmsg.ParseACLResourceType); err != nil {
		return f, err
	}
	if f.Pattern, err = aclEnum("pattern_type", deref(in.PatternType), def, kmsg.ParseACLResourcePatternType); err != nil {
		return f, err
	}
	if f.Operation, err = aclEnum("operation", deref(in.Operation), def, kmsg.ParseACLOperation); err != nil {
		return f, err
	}
	if f.Permission, err = aclEnum("permission", deref(in.Permission), def, kmsg.ParseACLPermissionType); err != nil {
		return f, err
	}
	if !filter {
		switch {
		case f.ResourceType == kmsg.ACLResourceTypeAny:
			return f, badRequest("resource_type cannot be ANY")
		case f.Pattern == kmsg.ACLResourcePatternTypeAny, f.Pattern == kmsg.ACLResourcePatternTypeMatch:
			return f, badRequest("pattern_type cannot be %s", f.Pattern)
		case f.Operation == kmsg.ACLOperationAny:
			return f, badRequest("operation cannot be ANY")
		case f.Permission == kmsg.ACLPermissionTypeAny:
			return f, badRequest("permission cannot be ANY")
		}
	}
	f.ResourceName, f.Principal, f.Host = in.ResourceName, in.Principal, in.Host
	return f, nil
}

// parseACLFilter reads the filter of GET and DELETE /acls from the query
// (a parameter given empty is left out).
func parseACLFilter(q url.Values) (aclFilter, *Error) {
	opt := func(k string) *string {
		if v := q.Get(k); v != "" {
			return &v
		}
		return nil
	}
	return parseACL(aclFields{
		ResourceType: opt("resource_type"), ResourceName: opt("resource_name"), PatternType: opt("pattern_type"),
		Principal: opt("principal"), Host: opt("host"), Operation: opt("operation"), Permission: opt("permission"),
	}, true)
}

// parseCreateACL reads and checks the body of POST /acls, one ACL.
func parseCreateACL(body []byte) (kmsg.CreateACLsRequestCreation, *Error) {
	var in aclFields
	if err := decodeStrict(body, &in); err != nil {
		return kmsg.CreateACLsRequestCreation{}, err
	}
	f, err := parseACL(in, false)
	if err != nil {
		return kmsg.CreateACLsRequestCreation{}, err
	}
	return kmsg.CreateACLsRequestCreation{
		ResourceType: f.ResourceType, ResourceName: *f.ResourceName, ResourcePatternType: f.Pattern,
		Principal: *f.Principal, Host: *f.Host, Operation: f.Operation, PermissionType: f.Permission,
	}, nil
}

// aclQuery is the query string naming one ACL or filter, as Confluent's
// self links and Location header spell it.
func aclQuery(a aclEntry) string {
	q := url.Values{}
	q.Set("resource_type", a.ResourceType)
	q.Set("resource_name", a.ResourceName)
	q.Set("pattern_type", a.PatternType)
	q.Set("principal", a.Principal)
	q.Set("host", a.Host)
	q.Set("operation", a.Operation)
	q.Set("permission", a.Permission)
	return q.Encode()
}

func (c v3) aclJSON(a aclEntry) map[string]any {
	return map[string]any{
		"kind":          "KafkaAcl",
		"metadata":      resourceMeta{Self: c.url("acls") + "?" + aclQuery(a)},
		"cluster_id":    c.cluster,
		"resource_type": a.ResourceType,
		"resource_name": a.ResourceName,
		"pattern_type":  a.PatternType,
		"principal":     a.Principal,
		"host":          a.Host,
		"operation":     a.Operation,
		"permission":    a.Permission,
	}
}

// sortACLs orders ACLs as Confluent does: by each field in turn.
func sortACLs(as []aclEntry) {
	slices.SortFunc(as, func(a, b aclEntry) int {
		return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.ResourceName, b.ResourceName),
			cmp.Compare(a.PatternType, b.PatternType), cmp.Compare(a.Principal, b.Principal),
			cmp.Compare(a.Host, b.Host), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
	})
}

func (c v3) aclList(as []aclEntry) []any {
	sortACLs(as)
	data := make([]any, 0, len(as))
	for _, a := range as {
		data = append(data, c.aclJSON(a))
	}
	return data
}

func entry(rt kmsg.ACLResourceType, name string, pt kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) aclEntry {
	return aclEntry{rt.String(), name, pt.String(), principal, host, op.String(), perm.String()}
}

// aclFail answers a Kafka error of the ACL requests; without an
// authorizer it is Kafka's SecurityDisabled, a 400 as Confluent's.
func aclFail(w http.ResponseWriter, code int16, msg string) {
	err := kerrOf(code)
	if msg == "" {
		msg = err.Error()
	}
	v3Fail(w, v3KafkaError(err, msg))
}

func (p *Proxy) v3SearchACLs(w http.ResponseWriter, r *http.Request, c v3) {
	f, perr := parseACLFilter(r.URL.Query())
	if perr != nil {
		v3Fail(w, perr)
		return
	}
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourceName, req.ResourcePatternType = f.ResourceType, f.ResourceName, f.Pattern
	req.Principal, req.Host, req.Operation, req.PermissionType = f.Principal, f.Host, f.Operation, f.Permission
	resp, err := req.RequestWith(r.Context(), p.adminc)
	if err != nil {
		v3Fail(w, err)
		return
	}
	if resp.ErrorCode != 0 {
		aclFail(w, resp.ErrorCode, deref(resp.ErrorMessage))
		return
	}
	var as []aclEntry
	for _, res := range resp.Resources {
		for _, a := range res.ACLs {
			as = append(as, entry(res.ResourceType, res.ResourceName, res.ResourcePatternType, a.Principal, a.Host, a.Operation, a.PermissionType))
		}
	}
	self := c.url("acls")
	if r.URL.RawQuery != "" {
		self += "?" + r.URL.RawQuery
	}
	writeJSON(w, http.StatusOK, v3ContentType, c.list("KafkaAclList", self, c.aclList(as)))
}

func (p *Proxy) v3CreateACL(w http.ResponseWriter, r *http.Request, c v3) {
	crs, ok := p.createACLs(w, r, func(body []byte) ([]kmsg.CreateACLsRequestCreation, *Error) {
		cr, err := parseCreateACL(body)
		return []kmsg.CreateACLsRequestCreation{cr}, err
	})
	if !ok {
		return
	}
	cr := crs[0]
	a := entry(cr.ResourceType, cr.ResourceName, cr.ResourcePatternType, cr.Principal, cr.Host, cr.Operation, cr.PermissionType)
	w.Header().Set("Location", c.url("acls")+"?"+aclQuery(a))
	w.WriteHeader(http.StatusCreated)
}

// createACLs reads the body of a POST that creates ACLs, parses it, and
// creates the ACLs in one CreateACLs request; it returns them, or false
// when it has answered an error.
func (p *Proxy) createACLs(w http.ResponseWriter, r *http.Request, parse func([]byte) ([]kmsg.CreateACLsRequestCreation, *Error)) ([]kmsg.CreateACLsRequestCreation, bool) {
	body, berr := p.readBody(r)
	if berr != nil {
		v3Fail(w, berr)
		return nil, false
	}
	crs, perr := parse(body)
	if perr != nil {
		v3Fail(w, perr)
		return nil, false
	}
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = crs
	resp, err := req.RequestWith(r.Context(), p.adminc)
	if err != nil {
		v3Fail(w, err)
		return nil, false
	}
	if len(resp.Results) != len(crs) {
		v3Fail(w, kafkaError(errUnexpectedResults))
		return nil, false
	}
	for _, res := range resp.Results {
		if res.ErrorCode != 0 {
			aclFail(w, res.ErrorCode, deref(res.ErrorMessage))
			return nil, false
		}
	}
	return crs, true
}

// parseCreateACLBatch reads the body of POST /acls:batch, {"data":[ACL,
// …]}: every ACL is checked before any is created; an error names its
// index.
func parseCreateACLBatch(body []byte) ([]kmsg.CreateACLsRequestCreation, *Error) {
	var in struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return nil, err
	}
	if len(in.Data) == 0 {
		return nil, unprocessable("data: must not be null or empty")
	}
	out := make([]kmsg.CreateACLsRequestCreation, 0, len(in.Data))
	for i, raw := range in.Data {
		c, err := parseCreateACL(raw)
		if err != nil {
			err.Message = fmt.Sprintf("data[%d]: %s", i, err.Message)
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func (p *Proxy) v3CreateACLBatch(w http.ResponseWriter, r *http.Request, _ v3) {
	if _, ok := p.createACLs(w, r, parseCreateACLBatch); ok {
		w.WriteHeader(http.StatusNoContent)
	}
}

func (p *Proxy) v3DeleteACLs(w http.ResponseWriter, r *http.Request, c v3) {
	f, perr := parseACLFilter(r.URL.Query())
	if perr != nil {
		v3Fail(w, perr)
		return
	}
	req := kmsg.NewPtrDeleteACLsRequest()
	req.Filters = []kmsg.DeleteACLsRequestFilter{{
		ResourceType: f.ResourceType, ResourceName: f.ResourceName, ResourcePatternType: f.Pattern,
		Principal: f.Principal, Host: f.Host, Operation: f.Operation, PermissionType: f.Permission,
	}}
	resp, err := req.RequestWith(r.Context(), p.adminc)
	if err != nil {
		v3Fail(w, err)
		return
	}
	if len(resp.Results) != 1 {
		v3Fail(w, kafkaError(errUnexpectedResults))
		return
	}
	res := resp.Results[0]
	if res.ErrorCode != 0 {
		aclFail(w, res.ErrorCode, deref(res.ErrorMessage))
		return
	}
	var as []aclEntry
	for _, m := range res.MatchingACLs {
		if m.ErrorCode != 0 {
			aclFail(w, m.ErrorCode, deref(m.ErrorMessage))
			return
		}
		as = append(as, entry(m.ResourceType, m.ResourceName, m.ResourcePatternType, m.Principal, m.Host, m.Operation, m.PermissionType))
	}
	writeJSON(w, http.StatusOK, v3ContentType, map[string]any{"data": c.aclList(as)})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var errUnexpectedResults = errors.New("the broker answered a number of results other than the one asked")
