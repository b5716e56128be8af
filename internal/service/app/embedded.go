package app

// The in-process stand-ins `rankstream dev` runs on: kfake as the Kafka broker (with its data
// on disk, so topics and committed offsets survive a restart) and miniredis as Redis. Only Dev
// uses them.

import (
	"fmt"
	"net"

	"github.com/alicebob/miniredis/v2"
	"github.com/twmb/franz-go/pkg/kfake"
)

// EmbeddedKafka starts a one-broker kfake cluster listening on listen ("127.0.0.1:0" picks a free
// port), persisting to dataDir when it is not empty.
func EmbeddedKafka(listen, dataDir string, partitions int) (*kfake.Cluster, error) {
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(partitions),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) { return net.Listen(network, listen) }),
	}
	if dataDir != "" {
		opts = append(opts, kfake.DataDir(dataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded kafka on %s: %w", listen, err)
	}
	return c, nil
}

// EmbeddedRedis starts miniredis on listen.
func EmbeddedRedis(listen string) (*miniredis.Miniredis, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr(listen); err != nil {
		return nil, fmt.Errorf("embedded redis on %s: %w", listen, err)
	}
	return m, nil
}
