package topics

import (
	"strconv"

	"github.com/lovoo/goka"
)

// Dead-letter header names. A dead-letter record keeps the original key and value bytes.
const (
	HeaderSourceTopic     = "rankstream-source-topic"
	HeaderSourcePartition = "rankstream-source-partition"
	HeaderSourceOffset    = "rankstream-source-offset"
	HeaderReason          = "rankstream-reason"
)

// DLQHeaders builds the headers of a dead-letter record.
func DLQHeaders(topic string, partition int32, offset int64, reason string) goka.Headers {
	return goka.Headers{
		HeaderSourceTopic:     []byte(topic),
		HeaderSourcePartition: []byte(strconv.FormatInt(int64(partition), 10)),
		HeaderSourceOffset:    []byte(strconv.FormatInt(offset, 10)),
		HeaderReason:          []byte(reason),
	}
}
