package kafka

import (
	"strconv"
	"testing"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGokaPartitionsLikeKafkaClients: a key produced by a Kafka client with default settings
// and the same key written by goka (changelog, emitter) must land in the same partition.
func TestGokaPartitionsLikeKafkaClients(t *testing.T) {
	kafka := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	goka := sarama.NewCustomPartitioner(sarama.WithAbsFirst(), sarama.WithCustomHashFunction(NewMurmur2))("t")
	for _, n := range []int{1, 3, 8, 12, 64} {
		for i := range 20_000 {
			key := "u" + strconv.Itoa(i)
			want := kafka.Partition(&kgo.Record{Key: []byte(key)}, n)
			got, err := goka.Partition(&sarama.ProducerMessage{Key: sarama.StringEncoder(key)}, int32(n))
			if err != nil {
				t.Fatal(err)
			}
			if int(got) != want || int(PartitionOf(key, n)) != want {
				t.Fatalf("key %q over %d partitions: goka %d, Kafka client %d", key, n, got, want)
			}
		}
	}
}

func TestMurmur2KnownValues(t *testing.T) {
	// Values from Kafka's UtilsTest.testMurmur2.
	cases := map[string]int32{
		"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
		"a-little-bit-longer-string": -1486304829, "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	}
	for in, want := range cases {
		h := NewMurmur2()
		h.Write([]byte(in))
		if got := int32(h.Sum32()); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}
