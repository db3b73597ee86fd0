package analytics

import (
	"context"
	"errors"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Open connects to ClickHouse over the native protocol and pings it, so a
// returned Conn has reached the server at least once. The caller closes it.
func Open(ctx context.Context, cfg Config) (driver.Conn, error) {
	if cfg.Addr == "" {
		return nil, errors.New("unable to connect to ClickHouse: no address configured")
	}
	c := cfg.withDefaults()
	conn, err := clickhouse.Open(&clickhouse.Options{
		Protocol: clickhouse.Native,
		Addr:     []string{c.Addr},
		Auth: clickhouse.Auth{
			Database: c.Database,
			Username: c.Username,
			Password: c.Password,
		},
		DialTimeout: c.DialTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("unable to connect to ClickHouse at %s: %w", c.Addr, err)
	}
	// clickhouse.Open only builds the pool; Ping is the first real dial.
	if err := conn.Ping(ctx); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("unable to connect to ClickHouse at %s: %w", c.Addr, err)
	}
	return conn, nil
}
