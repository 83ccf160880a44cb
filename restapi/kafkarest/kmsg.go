package kafkarest

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type (
	kmsgOffsetCommitRequest  = kmsg.OffsetCommitRequest
	kmsgOffsetCommitResponse = kmsg.OffsetCommitResponse
)

func kerrOf(code int16) error { return kerr.ErrorForCode(code) }
