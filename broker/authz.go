package broker

// Authorized operations as Apache Kafka reports them without an authorizer:
// every operation the resource type supports, as a bit field with bit n set
// for ACL operation code n (READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7,
// DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
// IDEMPOTENT_WRITE 12). Values checked against Apache Kafka 4.4 by the
// differential test (integration/broker_failfast_diff_test.go).
const (
	// topicAuthorizedOps: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE,
	// DESCRIBE_CONFIGS, ALTER_CONFIGS.
	topicAuthorizedOps int32 = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11
	// clusterAuthorizedOps: CREATE, ALTER, DESCRIBE, CLUSTER_ACTION,
	// DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE.
	clusterAuthorizedOps int32 = 1<<5 | 1<<7 | 1<<8 | 1<<9 | 1<<10 | 1<<11 | 1<<12
	// notAuthorizedOps is what Kafka answers when operations were not asked for.
	notAuthorizedOps int32 = -2147483648
)

// errSecurityDisabled is SECURITY_DISABLED, Kafka's answer to ACL requests
// when no authorizer is configured.
const errSecurityDisabled int16 = 54
