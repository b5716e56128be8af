package clickhouse

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DefaultTopKRetentionDays is how long topk_history keeps rows on servers with TTL.
const DefaultTopKRetentionDays = 90

// Sink writes rankstream's history into one ClickHouse database. It is safe for concurrent
// use; each write takes a connection of its own from the pool.
type Sink struct {
	conn     driver.Conn
	database string
	cfg      config
}

type config struct {
	user, password string
	retentionDays  int
}

// dialTimeout bounds how long connecting to the server may take.
const dialTimeout = 10 * time.Second

// Option configures a Sink built by Open.
type Option func(*config)

// WithAuth sets the user and password, overriding the default user "default" without a
// password.
func WithAuth(user, password string) Option {
	return func(c *config) { c.user, c.password = user, password }
}

// WithTopKRetention sets after how many days (of window_end) topk_history rows expire,
// overriding the default DefaultTopKRetentionDays; 0 keeps them forever. Migrate sets it
// when it creates the table, and only on servers that have TTL (19.6 and later).
func WithTopKRetention(days int) Option { return func(c *config) { c.retentionDays = days } }

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *config) validate(database string) error {
	switch {
	case !identifier.MatchString(database):
		return fmt.Errorf("database name %q: want letters, digits and '_', not starting with a digit", database)
	case c.retentionDays < 0:
		return fmt.Errorf("topk retention %d days: want 0 (forever) or more", c.retentionDays)
	}
	return nil
}

// Open connects to the ClickHouse server at addr (host:port of the native protocol) and pings
// it. The database need not exist yet: Migrate creates it. Statements name the database
// explicitly, so the connection's default database does not matter.
func Open(ctx context.Context, addr, database string, opts ...Option) (*Sink, error) {
	s, err := New(addr, database, opts...)
	if err != nil {
		return nil, err
	}
	if err := s.conn.Ping(ctx); err != nil {
		s.conn.Close()
		return nil, fmt.Errorf("clickhouse sink: ping %s: %w", addr, err)
	}
	return s, nil
}

// New is Open without the ping: it connects on the first write, so a server that is down
// fails that write (IsRetryable), not New. For a process that must start while the history
// store is down.
func New(addr, database string, opts ...Option) (*Sink, error) {
	cfg := config{user: "default", retentionDays: DefaultTopKRetentionDays}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(database); err != nil {
		return nil, fmt.Errorf("clickhouse sink: %w", err)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Protocol:    clickhouse.Native,
		Addr:        []string{addr},
		Auth:        clickhouse.Auth{Username: cfg.user, Password: cfg.password},
		DialTimeout: dialTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("clickhouse sink: open %s: %w", addr, err)
	}
	return &Sink{conn: conn, database: database, cfg: cfg}, nil
}

// Close closes the sink's connections.
func (s *Sink) Close() error {
	if err := s.conn.Close(); err != nil {
		return fmt.Errorf("clickhouse sink: close: %w", err)
	}
	return nil
}
