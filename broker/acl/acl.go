// Package acl is the broker's authorizer: access control entries bound to
// resource patterns, the filters of Kafka's DescribeAcls and DeleteAcls
// requests, and the decision Kafka's StandardAuthorizer makes.
//
// The decision for a principal connecting from a host, wanting an
// operation on a resource:
//
//   - a super user is allowed everything;
//   - an ACL matches when its pattern matches the resource (LITERAL: the
//     same name, or the name "*"; PREFIXED: the resource's name starts
//     with it), its principal is the principal or "User:*", its host is
//     the host or "*", and its operation is the operation or ALL — or, for
//     an ALLOW, an operation that implies the one asked for (READ, WRITE,
//     DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies
//     DESCRIBE_CONFIGS);
//   - any matching DENY denies; else any matching ALLOW allows;
//   - if no ACL at all binds the resource, allow.everyone.if.no.acl.found
//     decides; else it is denied.
//
// The package is pure: no I/O, no clock. Its types carry Kafka's wire codes.
package acl

import (
	"fmt"
	"strings"
)

// ResourceType is Kafka's resource type code.
type ResourceType int8

// Resource types.
const (
	ResourceUnknown         ResourceType = 0
	ResourceAny             ResourceType = 1
	ResourceTopic           ResourceType = 2
	ResourceGroup           ResourceType = 3
	ResourceCluster         ResourceType = 4
	ResourceTransactionalID ResourceType = 5
	ResourceDelegationToken ResourceType = 6
	ResourceUser            ResourceType = 7
)

// PatternType is Kafka's pattern type code.
type PatternType int8

// Pattern types: ANY and MATCH appear in filters only.
const (
	PatternUnknown  PatternType = 0
	PatternAny      PatternType = 1
	PatternMatch    PatternType = 2
	PatternLiteral  PatternType = 3
	PatternPrefixed PatternType = 4
)

// Operation is Kafka's ACL operation code.
type Operation int8

// Operations.
const (
	OpUnknown         Operation = 0
	OpAny             Operation = 1
	OpAll             Operation = 2
	OpRead            Operation = 3
	OpWrite           Operation = 4
	OpCreate          Operation = 5
	OpDelete          Operation = 6
	OpAlter           Operation = 7
	OpDescribe        Operation = 8
	OpClusterAction   Operation = 9
	OpDescribeConfigs Operation = 10
	OpAlterConfigs    Operation = 11
	OpIdempotentWrite Operation = 12
	OpCreateTokens    Operation = 13
	OpDescribeTokens  Operation = 14
)

// Permission is Kafka's permission type code.
type Permission int8

// Permissions.
const (
	PermissionUnknown Permission = 0
	PermissionAny     Permission = 1
	PermissionDeny    Permission = 2
	PermissionAllow   Permission = 3
)

// ClusterName is the name of the one CLUSTER resource.
const ClusterName = "kafka-cluster"

// Wildcards of resource names and principals.
const (
	WildcardResource  = "*"
	WildcardPrincipal = "User:*"
	WildcardHost      = "*"
)

var resourceNames = map[ResourceType]string{ResourceUnknown: "UNKNOWN", ResourceAny: "ANY", ResourceTopic: "TOPIC", ResourceGroup: "GROUP",
	ResourceCluster: "CLUSTER", ResourceTransactionalID: "TRANSACTIONAL_ID", ResourceDelegationToken: "DELEGATION_TOKEN", ResourceUser: "USER"}

var patternNames = map[PatternType]string{PatternUnknown: "UNKNOWN", PatternAny: "ANY", PatternMatch: "MATCH", PatternLiteral: "LITERAL", PatternPrefixed: "PREFIXED"}

var operationNames = map[Operation]string{OpUnknown: "UNKNOWN", OpAny: "ANY", OpAll: "ALL", OpRead: "READ", OpWrite: "WRITE", OpCreate: "CREATE",
	OpDelete: "DELETE", OpAlter: "ALTER", OpDescribe: "DESCRIBE", OpClusterAction: "CLUSTER_ACTION", OpDescribeConfigs: "DESCRIBE_CONFIGS",
	OpAlterConfigs: "ALTER_CONFIGS", OpIdempotentWrite: "IDEMPOTENT_WRITE", OpCreateTokens: "CREATE_TOKENS", OpDescribeTokens: "DESCRIBE_TOKENS"}

var permissionNames = map[Permission]string{PermissionUnknown: "UNKNOWN", PermissionAny: "ANY", PermissionDeny: "DENY", PermissionAllow: "ALLOW"}

func (r ResourceType) String() string { return nameOr(resourceNames, r) }
func (p PatternType) String() string  { return nameOr(patternNames, p) }
func (o Operation) String() string    { return nameOr(operationNames, o) }
func (p Permission) String() string   { return nameOr(permissionNames, p) }

func nameOr[K comparable](m map[K]string, k K) string {
	if s, ok := m[k]; ok {
		return s
	}
	return "UNKNOWN"
}

// Binding is an access control entry bound to a resource pattern.
type Binding struct {
	ResourceType ResourceType
	ResourceName string
	PatternType  PatternType
	Principal    string
	Host         string
	Operation    Operation
	Permission   Permission
}

// Validate applies Kafka's checks of a new ACL (AclControlManager and
// AclApis); the error text is Kafka's, the error INVALID_REQUEST.
func (b Binding) Validate() error {
	switch {
	case b.ResourceType == ResourceUnknown || b.ResourceType == ResourceAny || resourceNames[b.ResourceType] == "":
		return invalid(fmt.Sprintf("Invalid resourceType %s", b.ResourceType))
	case b.PatternType != PatternLiteral && b.PatternType != PatternPrefixed:
		return invalid(fmt.Sprintf("Invalid patternType %s", b.PatternType))
	case b.Operation == OpUnknown || b.Operation == OpAny || operationNames[b.Operation] == "":
		return invalid(fmt.Sprintf("Invalid operation %s", b.Operation))
	case b.Permission != PermissionDeny && b.Permission != PermissionAllow:
		return invalid(fmt.Sprintf("Invalid permissionType %s", b.Permission))
	case b.ResourceType == ResourceCluster && b.ResourceName != ClusterName:
		return invalid(fmt.Sprintf("The only valid name for the CLUSTER resource is %s", ClusterName))
	case b.ResourceName == "":
		return invalid("Invalid empty resource name")
	}
	if typ, name, ok := strings.Cut(b.Principal, ":"); !ok || typ == "" || name == "" {
		return invalid(fmt.Sprintf("Invalid principal %s", b.Principal))
	}
	return nil
}

// Filter selects bindings (DescribeAcls, DeleteAcls). A nil name,
// principal or host matches any.
type Filter struct {
	ResourceType ResourceType
	ResourceName *string
	PatternType  PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// Validate refuses filters with unknown values, as Kafka's
// AclControlManager.validateFilter.
func (f Filter) Validate() error {
	if f.ResourceType == ResourceUnknown || resourceNames[f.ResourceType] == "" || f.PatternType == PatternUnknown || patternNames[f.PatternType] == "" {
		return invalid("Unknown patternFilter.")
	}
	if f.Operation == OpUnknown || operationNames[f.Operation] == "" || f.Permission == PermissionUnknown || permissionNames[f.Permission] == "" {
		return invalid("Unknown entryFilter.")
	}
	return nil
}

// Matches reports whether the filter selects b (Kafka's
// AclBindingFilter.matches).
func (f Filter) Matches(b Binding) bool {
	return f.matchesPattern(b) &&
		(f.Principal == nil || *f.Principal == b.Principal) &&
		(f.Host == nil || *f.Host == b.Host) &&
		(f.Operation == OpAny || f.Operation == b.Operation) &&
		(f.Permission == PermissionAny || f.Permission == b.Permission)
}

func (f Filter) matchesPattern(b Binding) bool {
	if f.ResourceType != ResourceAny && f.ResourceType != b.ResourceType {
		return false
	}
	if f.PatternType != PatternAny && f.PatternType != PatternMatch && f.PatternType != b.PatternType {
		return false
	}
	if f.ResourceName == nil {
		return true
	}
	name := *f.ResourceName
	if f.PatternType == PatternAny || f.PatternType == b.PatternType {
		return name == b.ResourceName
	}
	switch b.PatternType {
	case PatternLiteral:
		return name == b.ResourceName || b.ResourceName == WildcardResource
	case PatternPrefixed:
		return strings.HasPrefix(name, b.ResourceName)
	}
	return false
}

// Authorizer decides requests from a set of bindings.
type Authorizer struct {
	// SuperUsers are allowed everything (super.users).
	SuperUsers map[string]bool
	// AllowIfNoACL allows operations on resources no ACL binds
	// (allow.everyone.if.no.acl.found).
	AllowIfNoACL bool
	// ACLs are the bindings.
	ACLs []Binding
}

// Request is one authorization question.
type Request struct {
	Principal    string // "User:alice"
	Host         string // the client's IP address
	Operation    Operation
	ResourceType ResourceType
	ResourceName string
}

// Authorize decides a request.
func (a *Authorizer) Authorize(r Request) bool {
	if a.SuperUsers[r.Principal] {
		return true
	}
	found, allowed := false, false
	for _, b := range a.ACLs {
		if b.ResourceType != r.ResourceType || !patternMatches(b, r.ResourceName) {
			continue
		}
		found = true
		if b.Principal != r.Principal && b.Principal != WildcardPrincipal {
			continue
		}
		if b.Host != r.Host && b.Host != WildcardHost {
			continue
		}
		if !operationMatches(b, r.Operation) {
			continue
		}
		if b.Permission == PermissionDeny {
			return false
		}
		allowed = true
	}
	if !found {
		return a.AllowIfNoACL
	}
	return allowed
}

// AuthorizeAny reports whether the principal may do op on at least one
// resource of the type (Kafka's authorizeByResourceType, used for
// idempotent producers and transactional ids): some ALLOW binding of the
// type, literal or prefixed, that no DENY on the same pattern cancels.
func (a *Authorizer) AuthorizeAny(r Request) bool {
	if a.SuperUsers[r.Principal] {
		return true
	}
	principalHost := func(b Binding) bool {
		return (b.Principal == r.Principal || b.Principal == WildcardPrincipal) && (b.Host == r.Host || b.Host == WildcardHost)
	}
	// A DENY of everything (literal "*") denies all.
	for _, b := range a.ACLs {
		if b.ResourceType == r.ResourceType && b.Permission == PermissionDeny && principalHost(b) && operationMatches(b, r.Operation) &&
			b.PatternType == PatternLiteral && b.ResourceName == WildcardResource {
			return false
		}
	}
	for _, b := range a.ACLs {
		if b.ResourceType != r.ResourceType || b.Permission != PermissionAllow || !principalHost(b) || !operationMatches(b, r.Operation) {
			continue
		}
		denied := false
		for _, d := range a.ACLs {
			if d.ResourceType == r.ResourceType && d.Permission == PermissionDeny && principalHost(d) && operationMatches(d, r.Operation) &&
				(d.PatternType == PatternPrefixed && strings.HasPrefix(b.ResourceName, d.ResourceName) ||
					d.PatternType == PatternLiteral && b.PatternType == PatternLiteral && d.ResourceName == b.ResourceName) {
				denied = true
				break
			}
		}
		if !denied {
			return true
		}
	}
	return false
}

func patternMatches(b Binding, name string) bool {
	switch b.PatternType {
	case PatternLiteral:
		return b.ResourceName == name || b.ResourceName == WildcardResource
	case PatternPrefixed:
		return strings.HasPrefix(name, b.ResourceName)
	}
	return false
}

// operationMatches: ALL matches every operation; an ALLOW of READ, WRITE,
// DELETE or ALTER also allows DESCRIBE, of ALTER_CONFIGS also
// DESCRIBE_CONFIGS; a DENY matches its own operation (or ALL) only.
func operationMatches(b Binding, op Operation) bool {
	if b.Operation == OpAll || b.Operation == op {
		return true
	}
	if b.Permission != PermissionAllow {
		return false
	}
	switch op {
	case OpDescribe:
		return b.Operation == OpRead || b.Operation == OpWrite || b.Operation == OpDelete || b.Operation == OpAlter
	case OpDescribeConfigs:
		return b.Operation == OpAlterConfigs
	}
	return false
}

// Operations lists the operations a resource type supports, for
// authorized-operations bit fields (Kafka's AclEntry.supportedOperations).
func Operations(rt ResourceType) []Operation {
	switch rt {
	case ResourceTopic:
		return []Operation{OpRead, OpWrite, OpCreate, OpDescribe, OpDelete, OpAlter, OpDescribeConfigs, OpAlterConfigs}
	case ResourceGroup:
		return []Operation{OpRead, OpDescribe, OpDelete, OpDescribeConfigs, OpAlterConfigs}
	case ResourceCluster:
		return []Operation{OpCreate, OpClusterAction, OpDescribeConfigs, OpAlterConfigs, OpIdempotentWrite, OpAlter, OpDescribe}
	case ResourceTransactionalID:
		return []Operation{OpDescribe, OpWrite}
	case ResourceDelegationToken:
		return []Operation{OpDescribe}
	case ResourceUser:
		return []Operation{OpCreateTokens, OpDescribeTokens}
	}
	return nil
}

// AuthorizedOperations is the bit field (bit n for operation n) of the
// operations r's principal may do on the resource; r.Operation is ignored.
func (a *Authorizer) AuthorizedOperations(r Request) int32 {
	var bits int32
	for _, op := range Operations(r.ResourceType) {
		r.Operation = op
		if a.Authorize(r) {
			bits |= 1 << op
		}
	}
	return bits
}

// invalid is an INVALID_REQUEST error whose text is Kafka's (capitalised,
// as Kafka's messages are).
type invalid string

func (e invalid) Error() string { return string(e) }
