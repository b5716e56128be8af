package app

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/gateway"
)

// GatewayConfig is what `rankstream gateway` runs: the write API in front of Kafka.
type GatewayConfig struct {
	Gateway gateway.Config // Keys and Log are set by Gateway
	// KeysFile holds the accepted API keys (gateway.ParseKeys), read again on SIGHUP.
	KeysFile string
	HTTPAddr string
}

// Gateway serves the write API until ctx ends. The topics must exist (`rankstream topics` or
// `process --create-topics`): /readyz says which one is missing.
func Gateway(ctx context.Context, cfg GatewayConfig, log *slog.Logger) error {
	list, err := gateway.ReadKeys(cfg.KeysFile)
	if err != nil {
		return err
	}
	keys := gateway.NewKeys(list)
	cfg.Gateway.Keys, cfg.Gateway.Log = keys, log
	gw, err := gateway.New(cfg.Gateway)
	if err != nil {
		return err
	}
	defer gw.Close()
	go reloadKeys(ctx, cfg.KeysFile, keys, log)
	mux := obs.Mux(gw.Ready)
	gw.Register(mux)
	return ServeHTTP(ctx, cfg.HTTPAddr, mux, log, func(a net.Addr) {
		log.Info("gateway: serving", "http", a.String(), "brokers", cfg.Gateway.Kafka.Brokers, "keys", len(list))
	})
}

// reloadKeys reads the keys file again on every SIGHUP until ctx ends. A file that cannot be
// read or parsed leaves the keys as they were (logged at error).
func reloadKeys(ctx context.Context, path string, keys *gateway.Keys, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		list, err := gateway.ReadKeys(path)
		if err != nil {
			log.Error("gateway: keys not reloaded; the previous keys stay in force", "err", err)
			continue
		}
		keys.Set(list)
		names := make([]string, len(list))
		for i, k := range list {
			names[i] = k.Name
		}
		log.Info("gateway: keys reloaded", "keys", names)
	}
}
