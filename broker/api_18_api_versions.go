package broker

import "github.com/twmb/franz-go/pkg/kmsg"

// ApiVersions: v0-3. The response header is always v0 (KIP-511).

const apiVersionsKey int16 = 18

// api is one supported API key: the versions advertised and accepted, and
// its handler.
type api struct {
	key      int16
	min, max int16
	handle   func(c *conn, req kmsg.Request) *reply
}

// apiTable is the single list of supported APIs: ApiVersions reports it and
// the request reader enforces it, so they cannot drift apart. Produce is
// advertised from v0 so that librdkafka enables compression (KAFKA-18659),
// but v0-2 requests carry old message formats and are refused per partition.
var apiTable = []api{
	{key: 0, min: 0, max: 12, handle: handleProduce},
	{key: 1, min: 4, max: 12, handle: handleFetch},
	{key: 2, min: 1, max: 8, handle: handleListOffsets},
	{key: 3, min: 0, max: 12, handle: handleMetadata},
	{key: 8, min: 0, max: 9, handle: handleOffsetCommit},
	{key: 9, min: 0, max: 9, handle: handleOffsetFetch},
	{key: 10, min: 0, max: 4, handle: handleFindCoordinator},
	{key: 11, min: 0, max: 9, handle: handleJoinGroup},
	{key: 12, min: 0, max: 4, handle: handleHeartbeat},
	{key: 13, min: 0, max: 5, handle: handleLeaveGroup},
	{key: 14, min: 0, max: 5, handle: handleSyncGroup},
	{key: 15, min: 0, max: 5, handle: handleDescribeGroups},
	{key: 16, min: 0, max: 5, handle: handleListGroups},
	{key: 17, min: 0, max: 1, handle: handleSASLHandshake},
	{key: 18, min: 0, max: 3}, // answered by handleFrame: it reports this table
	{key: 19, min: 0, max: 7, handle: handleCreateTopics},
	{key: 20, min: 0, max: 6, handle: handleDeleteTopics},
	{key: 21, min: 0, max: 2, handle: handleDeleteRecords},
	{key: 22, min: 0, max: 5, handle: handleInitProducerID},
	{key: 23, min: 0, max: 4, handle: handleOffsetForLeaderEpoch},
	{key: 24, min: 0, max: 5, handle: handleAddPartitionsToTxn},
	{key: 25, min: 0, max: 4, handle: handleAddOffsetsToTxn},
	{key: 26, min: 0, max: 5, handle: handleEndTxn},
	{key: 28, min: 0, max: 5, handle: handleTxnOffsetCommit},
	{key: 29, min: 1, max: 3, handle: handleDescribeACLs},
	{key: 30, min: 1, max: 3, handle: handleCreateACLs},
	{key: 31, min: 1, max: 3, handle: handleDeleteACLs},
	{key: 32, min: 0, max: 4, handle: handleDescribeConfigs},
	{key: 33, min: 0, max: 2, handle: handleAlterConfigs},
	{key: 35, min: 1, max: 5, handle: handleDescribeLogDirs},
	{key: 36, min: 0, max: 2, handle: handleSASLAuthenticate},
	{key: 37, min: 0, max: 3, handle: handleCreatePartitions},
	{key: 42, min: 0, max: 2, handle: handleDeleteGroups},
	{key: 44, min: 0, max: 1, handle: handleIncrementalAlterConfigs},
	{key: 47, min: 0, max: 0, handle: handleOffsetDelete},
	{key: 48, min: 0, max: 1, handle: handleDescribeClientQuotas},
	{key: 50, min: 0, max: 0, handle: handleDescribeUserSCRAMCredentials},
	{key: 51, min: 0, max: 0, handle: handleAlterUserSCRAMCredentials},
	{key: 60, min: 0, max: 1, handle: handleDescribeCluster},
	{key: 65, min: 0, max: 0, handle: handleDescribeTransactions},
	{key: 66, min: 0, max: 2, handle: handleListTransactions},
	// KIP-848: authorization (authz_groups.go) before the handlers.
	{key: 68, min: 0, max: 1, handle: consumerGroupHeartbeatAuthz},
	{key: 69, min: 0, max: 1, handle: consumerGroupDescribeAuthz},
	{key: 76, min: 1, max: 1, handle: handleShareGroupHeartbeat},
	{key: 77, min: 1, max: 1, handle: handleShareGroupDescribe},
}

var apiByKey = func() map[int16]*api {
	m := make(map[int16]*api, len(apiTable))
	for i := range apiTable {
		a := &apiTable[i]
		// Never advertise more than the codec knows.
		if req := kmsg.RequestForKey(a.key); req != nil && req.MaxVersion() < a.max {
			a.max = req.MaxVersion()
		}
		m[a.key] = a
	}
	return m
}()

func (b *Broker) apiVersionsResponse(version int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = version
	for _, a := range apiTable {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	// transaction.version 2 (KIP-890 part 2): clients bump the epoch with
	// every EndTxn and add partitions implicitly with Produce v12+.
	sf := kmsg.NewApiVersionsResponseSupportedFeature()
	sf.Name, sf.MinVersion, sf.MaxVersion = "transaction.version", 0, 2
	resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	ff := kmsg.NewApiVersionsResponseFinalizedFeature()
	ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = "transaction.version", 2, 2
	resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	resp.FinalizedFeaturesEpoch = 1
	return resp
}
