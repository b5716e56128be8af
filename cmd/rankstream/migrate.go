package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

// clickhouseFlags are the flags of every command that talks to ClickHouse.
type clickhouseFlags struct {
	addr, database, user, password string
	retentionDays                  int
}

func (c *clickhouseFlags) register(fs *flag.FlagSet) {
	c.registerConn(fs)
	fs.IntVar(&c.retentionDays, "topk-retention-days", rsclickhouse.DefaultTopKRetentionDays,
		"days topk_history keeps rows (a TTL set when the table is created, on servers from 19.6 on); 0 keeps them forever")
}

// registerConn registers the connection's flags only, for a command that only reads (serve).
func (c *clickhouseFlags) registerConn(fs *flag.FlagSet) {
	fs.StringVar(&c.addr, "clickhouse", "127.0.0.1:9000", "ClickHouse native protocol address, host:port")
	fs.StringVar(&c.database, "clickhouse-database", "rankstream", "ClickHouse database of the history tables")
	fs.StringVar(&c.user, "clickhouse-user", "default", "ClickHouse user")
	fs.StringVar(&c.password, "clickhouse-password", "", "ClickHouse password (better from RANKSTREAM_CLICKHOUSE_PASSWORD than on the command line)")
}

func (c *clickhouseFlags) open(ctx context.Context) (*rsclickhouse.Sink, error) {
	return rsclickhouse.Open(ctx, c.addr, c.database, c.options()...)
}

// sink is open without the ping: the sink connects on its first write.
func (c *clickhouseFlags) sink() (*rsclickhouse.Sink, error) {
	return rsclickhouse.New(c.addr, c.database, c.options()...)
}

func (c *clickhouseFlags) options() []rsclickhouse.Option {
	return []rsclickhouse.Option{rsclickhouse.WithAuth(c.user, c.password), rsclickhouse.WithTopKRetention(c.retentionDays)}
}

func runMigrate(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("migrate", "Creates the ClickHouse database and the history tables (topk_history, user_daily_steps, board_archive) that are missing, and checks the columns of those that exist. Running it again changes nothing.")
	fs.SetOutput(stderr)
	var cf clickhouseFlags
	cf.register(fs)
	var lf logFlags
	lf.register(fs)
	timeout := fs.Duration("timeout", time.Minute, "give up after this long")
	log, err := lf.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	sink, err := cf.open(ctx)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer sink.Close()
	created, err := sink.Migrate(ctx)
	for _, c := range created {
		fmt.Fprintln(stdout, "created", c)
	}
	if err != nil {
		return exitCode(err, stderr)
	}
	if len(created) == 0 {
		fmt.Fprintf(stdout, "database %s is up to date: nothing to create\n", cf.database)
	}
	log.Info("migrated", "clickhouse", cf.addr, "database", cf.database, "created", len(created))
	return 0
}
