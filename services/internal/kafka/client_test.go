package kafka

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

func TestOptsSecurity(t *testing.T) {
	cfg := &config.Config{InstanceID: "t"}
	base, err := Opts(cfg, []string{"127.0.0.1:1"}, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kafka = config.KafkaSecurity{SASLMechanism: "scram-sha-512", SASLUser: "u", SASLPassword: "p"}
	withSASL, err := Opts(cfg, []string{"127.0.0.1:1"}, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(withSASL) != len(base)+1 {
		t.Fatalf("SASL adds %d options, want 1", len(withSASL)-len(base))
	}
	cfg.Kafka = config.KafkaSecurity{SASLMechanism: "gssapi"}
	if _, err := Opts(cfg, nil, "c", nil); err == nil {
		t.Fatal("unknown mechanism accepted")
	}

	dir := t.TempDir()
	bad := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Kafka = config.KafkaSecurity{TLS: true, TLSCAFile: bad}
	if _, err := Opts(cfg, nil, "c", nil); err == nil || !strings.Contains(err.Error(), "no PEM certificates") {
		t.Fatalf("bad CA err = %v", err)
	}
	cfg.Kafka = config.KafkaSecurity{TLS: true, TLSCAFile: filepath.Join(dir, "missing.pem")}
	if _, err := Opts(cfg, nil, "c", nil); err == nil || !strings.Contains(err.Error(), "unable to read Kafka TLS CA") {
		t.Fatalf("missing CA err = %v", err)
	}
	cfg.Kafka = config.KafkaSecurity{TLS: true}
	withTLS, err := Opts(cfg, nil, "c", nil)
	if err != nil || len(withTLS) != len(base)+1 {
		t.Fatalf("TLS with system roots: %d opts, err %v", len(withTLS), err)
	}
}

func TestEmbeddedPing(t *testing.T) {
	cfg := &config.Config{InstanceID: "t", Brokers: []string{config.EmbeddedBroker}}
	f, closeKafka, err := Connect(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeKafka()
	if err := f.Ping(context.Background(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	cl, err := f.NewClient("producer", kgo.DefaultProduceTopic("x"))
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()
	closeKafka()
	if err := f.Ping(context.Background(), 2*time.Second); err == nil || !strings.Contains(err.Error(), "unable to reach Kafka") {
		t.Fatalf("ping of closed cluster: %v", err)
	}
}

// A produce retry waits for a metadata refresh, at most MetadataMinAge after
// the last one: with franz-go's 5s default a transaction that hit
// CONCURRENT_TRANSACTIONS stalled for 5s.
func TestOptsRetryWaitsBriefly(t *testing.T) {
	opts, err := Opts(&config.Config{InstanceID: "t"}, []string{"127.0.0.1:1"}, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if got := cl.OptValue(kgo.MetadataMinAge); got.(time.Duration) > time.Second {
		t.Fatalf("MetadataMinAge = %v, want at most 1s", got)
	}
}
