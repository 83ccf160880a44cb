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

// parseACLFilter reads the filter of GET and DELETE /acls from the query.
func parseACLFilter(q url.Values) (aclFilter, *Error) {
	var f aclFilter
	var err *Error
	if f.ResourceType, err = aclEnum("resource_type", q.Get("resource_type"), "ANY", kmsg.ParseACLResourceType); err != nil {
		return f, err
	}
	if f.Pattern, err = aclEnum("pattern_type", q.Get("pattern_type"), "ANY", kmsg.ParseACLResourcePatternType); err != nil {
		return f, err
	}
	if f.Operation, err = aclEnum("operation", q.Get("operation"), "ANY", kmsg.ParseACLOperation); err != nil {
		return f, err
	}
	if f.Permission, err = aclEnum("permission", q.Get("permission"), "ANY", kmsg.ParseACLPermissionType); err != nil {
		return f, err
	}
	opt := func(k string) *string {
		if v := q.Get(k); v != "" {
			return &v
		}
		return nil
	}
	f.ResourceName, f.Principal, f.Host = opt("resource_name"), opt("principal"), opt("host")
	return f, nil
}

// parseCreateACL reads and checks the body of POST /acls: every field is
// required, and none of the enums may be a wildcard (ANY, MATCH).
func parseCreateACL(body []byte) (kmsg.CreateACLsRequestCreation, *Error) {
	var c kmsg.CreateACLsRequestCreation
	var in struct {
		ResourceType *string `json:"resource_type"`
		ResourceName *string `json:"resource_name"`
		PatternType  *string `json:"pattern_type"`
		Principal    *string `json:"principal"`
		Host         *string `json:"host"`
		Operation    *string `json:"operation"`
		Permission   *string `json:"permission"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return c, err
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"resource_type", in.ResourceType}, {"resource_name", in.ResourceName}, {"pattern_type", in.PatternType},
		{"principal", in.Principal}, {"host", in.Host}, {"operation", in.Operation}, {"permission", in.Permission}} {
		if f.v == nil || *f.v == "" {
			return c, unprocessable("%s: must not be null or empty", f.name)
		}
	}
	var err *Error
	if c.ResourceType, err = aclEnum("resource_type", *in.ResourceType, "", kmsg.ParseACLResourceType); err != nil {
		return c, err
	}
	if c.ResourcePatternType, err = aclEnum("pattern_type", *in.PatternType, "", kmsg.ParseACLResourcePatternType); err != nil {
		return c, err
	}
	if c.Operation, err = aclEnum("operation", *in.Operation, "", kmsg.ParseACLOperation); err != nil {
		return c, err
	}
	if c.PermissionType, err = aclEnum("permission", *in.Permission, "", kmsg.ParseACLPermissionType); err != nil {
		return c, err
	}
	switch {
	case c.ResourceType == kmsg.ACLResourceTypeAny:
		return c, badRequest("resource_type cannot be ANY")
	case c.ResourcePatternType == kmsg.ACLResourcePatternTypeAny, c.ResourcePatternType == kmsg.ACLResourcePatternTypeMatch:
		return c, badRequest("pattern_type cannot be %s", c.ResourcePatternType)
	case c.Operation == kmsg.ACLOperationAny:
		return c, badRequest("operation cannot be ANY")
	case c.PermissionType == kmsg.ACLPermissionTypeAny:
		return c, badRequest("permission cannot be ANY")
	}
	c.ResourceName, c.Principal, c.Host = *in.ResourceName, *in.Principal, *in.Host
	return c, nil
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
	body, berr := p.readBody(r)
	if berr != nil {
		v3Fail(w, berr)
		return
	}
	cr, perr := parseCreateACL(body)
	if perr != nil {
		v3Fail(w, perr)
		return
	}
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = []kmsg.CreateACLsRequestCreation{cr}
	resp, err := req.RequestWith(r.Context(), p.adminc)
	if err != nil {
		v3Fail(w, err)
		return
	}
	if len(resp.Results) != 1 {
		v3Fail(w, kafkaError(errUnexpectedResults))
		return
	}
	if res := resp.Results[0]; res.ErrorCode != 0 {
		aclFail(w, res.ErrorCode, deref(res.ErrorMessage))
		return
	}
	a := entry(cr.ResourceType, cr.ResourceName, cr.ResourcePatternType, cr.Principal, cr.Host, cr.Operation, cr.PermissionType)
	w.Header().Set("Location", c.url("acls")+"?"+aclQuery(a))
	w.WriteHeader(http.StatusCreated)
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
	body, berr := p.readBody(r)
	if berr != nil {
		v3Fail(w, berr)
		return
	}
	crs, perr := parseCreateACLBatch(body)
	if perr != nil {
		v3Fail(w, perr)
		return
	}
	req := kmsg.NewPtrCreateACLsRequest()
	req.Creations = crs
	resp, err := req.RequestWith(r.Context(), p.adminc)
	if err != nil {
		v3Fail(w, err)
		return
	}
	if len(resp.Results) != len(crs) {
		v3Fail(w, kafkaError(errUnexpectedResults))
		return
	}
	for _, res := range resp.Results {
		if res.ErrorCode != 0 {
			aclFail(w, res.ErrorCode, deref(res.ErrorMessage))
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
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
