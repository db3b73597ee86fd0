package analytics

import (
	"fmt"
	"log/slog"
	"time"
)

// Config says where and as whom to connect to ClickHouse.
// Its String, GoString and LogValue forms never include the password.
type Config struct {
	// Addr is the native-protocol host:port, e.g. "127.0.0.1:19000".
	Addr string
	// Database is the session's default database; empty means "default".
	Database string
	// Username is empty for "default".
	Username string
	// Password is empty for none. It never appears in logs or errors.
	Password string
	// DialTimeout bounds each TCP connect; zero means DefaultDialTimeout.
	DialTimeout time.Duration
}

// DefaultDialTimeout replaces clickhouse-go's 30s default: the server is local,
// so a slow connect means it is down, and callers should hear that quickly.
const DefaultDialTimeout = 5 * time.Second

const redacted = "[redacted]"

// withDefaults fills the empty fields that have a sensible default.
func (c Config) withDefaults() Config {
	if c.Database == "" {
		c.Database = "default"
	}
	if c.Username == "" {
		c.Username = "default"
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	return c
}

// String renders the config as a password-free URL-like form.
func (c Config) String() string {
	d := c.withDefaults()
	pw := ""
	if c.Password != "" {
		pw = ":" + redacted
	}
	return fmt.Sprintf("clickhouse://%s%s@%s/%s?dial_timeout=%s", d.Username, pw, c.Addr, d.Database, d.DialTimeout)
}

// GoString covers %#v, which would otherwise print every field.
func (c Config) GoString() string { return "analytics.Config(" + c.String() + ")" }

// LogValue makes slog print the config without the password.
func (c Config) LogValue() slog.Value {
	d := c.withDefaults()
	return slog.GroupValue(
		slog.String("addr", c.Addr),
		slog.String("database", d.Database),
		slog.String("username", d.Username),
		slog.Bool("password_set", c.Password != ""),
		slog.Duration("dial_timeout", d.DialTimeout),
	)
}
