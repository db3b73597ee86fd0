package analytics

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestConfigNeverShowsPassword(t *testing.T) {
	const secret = "hunter2-very-secret"
	cfg := Config{Addr: "127.0.0.1:19000", Database: "events", Username: "recorder", Password: secret}

	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("connecting", "clickhouse", cfg)
	slog.New(slog.NewTextHandler(&buf, nil)).Info("connecting", "clickhouse", &cfg)
	forms := map[string]string{
		"slog":   buf.String(),
		"%v":     fmt.Sprintf("%v", cfg),
		"%+v":    fmt.Sprintf("%+v", cfg),
		"%#v":    fmt.Sprintf("%#v", cfg),
		"%s ptr": fmt.Sprintf("%s", &cfg),
		"String": cfg.String(),
	}
	for name, out := range forms {
		if strings.Contains(out, secret) {
			t.Errorf("%s form leaks the password: %s", name, out)
		}
		// The redacted form must still say where we connect.
		if !strings.Contains(out, "127.0.0.1:19000") || !strings.Contains(out, "recorder") {
			t.Errorf("%s form lost the address or user: %s", name, out)
		}
	}
	if !strings.Contains(buf.String(), `"password_set":true`) {
		t.Errorf("slog form should say a password is set: %s", buf.String())
	}
}

func TestConfigDefaults(t *testing.T) {
	got := Config{Addr: "127.0.0.1:19000"}.withDefaults()
	if got.Database != "default" || got.Username != "default" || got.DialTimeout != DefaultDialTimeout {
		t.Fatalf("withDefaults() = %#v, want default database/user and DefaultDialTimeout", got)
	}
	if s := (Config{Addr: "h:1"}).String(); strings.Contains(s, redacted) {
		t.Errorf("String() without a password should not show a redaction marker: %s", s)
	}
}
