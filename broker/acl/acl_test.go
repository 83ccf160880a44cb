package acl

import "testing"

func lit(rt ResourceType, name, principal string, op Operation, perm Permission) Binding {
	return Binding{ResourceType: rt, ResourceName: name, PatternType: PatternLiteral, Principal: principal, Host: "*", Operation: op, Permission: perm}
}

func TestAuthorize(t *testing.T) {
	pre := func(name, principal string, op Operation, perm Permission) Binding {
		b := lit(ResourceTopic, name, principal, op, perm)
		b.PatternType = PatternPrefixed
		return b
	}
	a := &Authorizer{
		SuperUsers: map[string]bool{"User:admin": true},
		ACLs: []Binding{
			pre("orders-", "User:alice", OpWrite, PermissionAllow),
			lit(ResourceTopic, "orders-secret", "User:alice", OpWrite, PermissionDeny),
			lit(ResourceTopic, "*", "User:*", OpRead, PermissionAllow),
			lit(ResourceTopic, "audit", "User:bob", OpAll, PermissionDeny),
			lit(ResourceGroup, "g", "User:bob", OpRead, PermissionAllow),
			{ResourceType: ResourceTopic, ResourceName: "hosted", PatternType: PatternLiteral, Principal: "User:carol", Host: "10.0.0.1", Operation: OpWrite, Permission: PermissionAllow},
			lit(ResourceTopic, "cfg", "User:carol", OpAlterConfigs, PermissionAllow),
		},
	}
	cases := []struct {
		name      string
		principal string
		host      string
		op        Operation
		rt        ResourceType
		res       string
		want      bool
	}{
		{"prefixed allow", "User:alice", "1.2.3.4", OpWrite, ResourceTopic, "orders-eu", true},
		{"deny wins over prefixed allow", "User:alice", "1.2.3.4", OpWrite, ResourceTopic, "orders-secret", false},
		{"write implies describe", "User:alice", "1.2.3.4", OpDescribe, ResourceTopic, "orders-eu", true},
		{"deny of write does not deny describe", "User:alice", "1.2.3.4", OpDescribe, ResourceTopic, "orders-secret", true},
		{"no implied create", "User:alice", "1.2.3.4", OpCreate, ResourceTopic, "orders-eu", false},
		{"wildcard resource and principal", "User:zed", "1.2.3.4", OpRead, ResourceTopic, "anything", true},
		{"deny all on literal", "User:bob", "1.2.3.4", OpRead, ResourceTopic, "audit", false},
		{"group read", "User:bob", "1.2.3.4", OpRead, ResourceGroup, "g", true},
		{"group without acl is denied", "User:bob", "1.2.3.4", OpRead, ResourceGroup, "other", false},
		{"host matches", "User:carol", "10.0.0.1", OpWrite, ResourceTopic, "hosted", true},
		{"host does not match", "User:carol", "10.0.0.2", OpWrite, ResourceTopic, "hosted", false},
		{"alter_configs implies describe_configs", "User:carol", "h", OpDescribeConfigs, ResourceTopic, "cfg", true},
		{"super user", "User:admin", "h", OpDelete, ResourceCluster, ClusterName, true},
		{"no acl on cluster: denied", "User:alice", "h", OpCreate, ResourceCluster, ClusterName, false},
	}
	for _, c := range cases {
		got := a.Authorize(Request{Principal: c.principal, Host: c.host, Operation: c.op, ResourceType: c.rt, ResourceName: c.res})
		if got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	a.AllowIfNoACL = true
	if !a.Authorize(Request{Principal: "User:alice", Host: "h", Operation: OpCreate, ResourceType: ResourceCluster, ResourceName: ClusterName}) {
		t.Error("allow.everyone.if.no.acl.found: a resource without ACLs is allowed")
	}
	if a.Authorize(Request{Principal: "User:bob", Host: "h", Operation: OpRead, ResourceType: ResourceGroup, ResourceName: "g2"}) != true {
		t.Error("allow.everyone.if.no.acl.found: group g2 has no ACL")
	}
	if a.Authorize(Request{Principal: "User:zed", Host: "h", Operation: OpRead, ResourceType: ResourceGroup, ResourceName: "g"}) {
		t.Error("a resource with ACLs is not opened by allow.everyone.if.no.acl.found")
	}
}

func TestAuthorizedOperations(t *testing.T) {
	a := &Authorizer{ACLs: []Binding{lit(ResourceTopic, "t", "User:u", OpRead, PermissionAllow)}}
	got := a.AuthorizedOperations(Request{Principal: "User:u", Host: "h", ResourceType: ResourceTopic, ResourceName: "t"})
	if want := int32(1<<OpRead | 1<<OpDescribe); got != want {
		t.Errorf("got %b, want %b", got, want)
	}
}

func TestAuthorizeAny(t *testing.T) {
	a := &Authorizer{ACLs: []Binding{
		lit(ResourceTransactionalID, "tx", "User:u", OpWrite, PermissionAllow),
		lit(ResourceTransactionalID, "tx", "User:v", OpWrite, PermissionAllow),
		lit(ResourceTransactionalID, "tx", "User:v", OpWrite, PermissionDeny),
	}}
	if !a.AuthorizeAny(Request{Principal: "User:u", Host: "h", Operation: OpWrite, ResourceType: ResourceTransactionalID}) {
		t.Error("u may write some transactional id")
	}
	if a.AuthorizeAny(Request{Principal: "User:v", Host: "h", Operation: OpWrite, ResourceType: ResourceTransactionalID}) {
		t.Error("v's allow is cancelled by a deny")
	}
	if a.AuthorizeAny(Request{Principal: "User:w", Host: "h", Operation: OpWrite, ResourceType: ResourceTransactionalID}) {
		t.Error("w has nothing")
	}
}

func TestFilterMatches(t *testing.T) {
	s := func(v string) *string { return &v }
	lt := lit(ResourceTopic, "orders", "User:a", OpRead, PermissionAllow)
	wild := lit(ResourceTopic, "*", "User:a", OpRead, PermissionAllow)
	pre := Binding{ResourceType: ResourceTopic, ResourceName: "ord", PatternType: PatternPrefixed, Principal: "User:a", Host: "*", Operation: OpRead, Permission: PermissionAllow}
	grp := lit(ResourceGroup, "orders", "User:a", OpRead, PermissionAllow)
	all := []Binding{lt, wild, pre, grp}
	cases := []struct {
		name string
		f    Filter
		want []Binding
	}{
		{"any everything", Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}, all},
		{"any with name: exact names only", Filter{ResourceType: ResourceTopic, ResourceName: s("orders"), PatternType: PatternAny, Operation: OpAny, Permission: PermissionAny}, []Binding{lt}},
		{"match: literal, wildcard and prefixes", Filter{ResourceType: ResourceTopic, ResourceName: s("orders"), PatternType: PatternMatch, Operation: OpAny, Permission: PermissionAny}, []Binding{lt, wild, pre}},
		{"literal", Filter{ResourceType: ResourceAny, ResourceName: s("orders"), PatternType: PatternLiteral, Operation: OpAny, Permission: PermissionAny}, []Binding{lt, grp}},
		{"prefixed", Filter{ResourceType: ResourceTopic, PatternType: PatternPrefixed, Operation: OpAny, Permission: PermissionAny}, []Binding{pre}},
		{"principal", Filter{ResourceType: ResourceAny, PatternType: PatternAny, Principal: s("User:b"), Operation: OpAny, Permission: PermissionAny}, nil},
		{"operation", Filter{ResourceType: ResourceAny, PatternType: PatternAny, Operation: OpWrite, Permission: PermissionAny}, nil},
	}
	for _, c := range cases {
		var got []Binding
		for _, b := range all {
			if c.f.Matches(b) {
				got = append(got, b)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	ok := lit(ResourceTopic, "t", "User:a", OpRead, PermissionAllow)
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		b    Binding
		want string
	}{
		{func() Binding { b := ok; b.ResourceType = ResourceAny; return b }(), "Invalid resourceType ANY"},
		{func() Binding { b := ok; b.PatternType = PatternMatch; return b }(), "Invalid patternType MATCH"},
		{func() Binding { b := ok; b.Operation = OpAny; return b }(), "Invalid operation ANY"},
		{func() Binding { b := ok; b.Permission = PermissionAny; return b }(), "Invalid permissionType ANY"},
		{func() Binding { b := ok; b.ResourceType = ResourceCluster; return b }(), "The only valid name for the CLUSTER resource is kafka-cluster"},
		{func() Binding { b := ok; b.ResourceName = ""; return b }(), "Invalid empty resource name"},
		{func() Binding { b := ok; b.Principal = "alice"; return b }(), "Invalid principal alice"},
	}
	for _, c := range bad {
		if err := c.b.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: got %v, want %q", c.b, err, c.want)
		}
	}
}

func FuzzFilter(f *testing.F) {
	f.Add(int8(2), "orders", int8(2), "User:a", int8(3), int8(3), "ord", int8(4))
	f.Fuzz(func(t *testing.T, rt int8, name string, pt int8, principal string, op, perm int8, bname string, bpt int8) {
		fl := Filter{ResourceType: ResourceType(rt), ResourceName: &name, PatternType: PatternType(pt), Principal: &principal, Operation: Operation(op), Permission: Permission(perm)}
		b := Binding{ResourceType: ResourceTopic, ResourceName: bname, PatternType: PatternType(bpt), Principal: principal, Host: "*", Operation: Operation(op), Permission: Permission(perm)}
		_ = fl.Validate()
		_ = fl.Matches(b)
		_ = b.Validate()
		a := &Authorizer{ACLs: []Binding{b}}
		_ = a.Authorize(Request{Principal: principal, Host: "h", Operation: Operation(op), ResourceType: ResourceType(rt), ResourceName: name})
	})
}
