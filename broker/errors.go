package broker

import "github.com/twmb/franz-go/pkg/kerr"

// Kafka error codes used by the handlers, from franz-go's kerr table.
var (
	errNone                     int16 = 0
	errOffsetOutOfRange               = kerr.OffsetOutOfRange.Code
	errCorruptMessage                 = kerr.CorruptMessage.Code
	errUnknownTopicOrPartition        = kerr.UnknownTopicOrPartition.Code
	errMessageTooLarge                = kerr.MessageTooLarge.Code
	errInvalidTopic                   = kerr.InvalidTopicException.Code
	errInvalidRequiredAcks            = kerr.InvalidRequiredAcks.Code
	errUnsupportedVersion             = kerr.UnsupportedVersion.Code
	errTopicAlreadyExists             = kerr.TopicAlreadyExists.Code
	errInvalidPartitions              = kerr.InvalidPartitions.Code
	errInvalidReplicationFactor       = kerr.InvalidReplicationFactor.Code
	errInvalidReplicaAssignment       = kerr.InvalidReplicaAssignment.Code
	errInvalidConfig                  = kerr.InvalidConfig.Code
	errInvalidRequest                 = kerr.InvalidRequest.Code
	errUnsupportedForMessageFmt       = kerr.UnsupportedForMessageFormat.Code
	errOutOfOrderSequence             = kerr.OutOfOrderSequenceNumber.Code
	errInvalidProducerEpoch           = kerr.InvalidProducerEpoch.Code
	errTopicDeletionDisabled          = kerr.TopicDeletionDisabled.Code
	errUnknownLeaderEpoch             = kerr.UnknownLeaderEpoch.Code
	errUnknownTopicID                 = kerr.UnknownTopicID.Code
	errKafkaStorageError              = kerr.KafkaStorageError.Code
	errInvalidRecord                  = kerr.InvalidRecord.Code
	errUnknownServerError             = kerr.UnknownServerError.Code
	errInvalidTxnState                = kerr.InvalidTxnState.Code
)
