package analytics

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// closedPort returns a loopback address on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("unable to reserve a port: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("unable to release port: %v", err)
	}
	return addr
}

func TestOpenClosedPortFailsClearly(t *testing.T) {
	addr := closedPort(t)
	const secret = "do-not-print-me"
	// The context deadline is far beyond the dial timeout: if Open fails
	// because of the context, the dial timeout was not honoured.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	conn, err := Open(ctx, Config{Addr: addr, Password: secret, DialTimeout: 2 * time.Second})
	if err == nil {
		_ = conn.Close()
		t.Fatalf("Open(%s) succeeded, want an error: nothing listens there", addr)
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("Open(%s) ran into the context deadline instead of failing the dial: %v", addr, err)
	}
	want := "unable to connect to ClickHouse at " + addr
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error leaks the password: %v", err)
	}
}

func TestOpenWithoutAddress(t *testing.T) {
	conn, err := Open(context.Background(), Config{})
	if err == nil {
		_ = conn.Close()
		t.Fatal("Open with an empty Addr succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "unable to connect to ClickHouse") {
		t.Errorf("unclear error: %v", err)
	}
}
