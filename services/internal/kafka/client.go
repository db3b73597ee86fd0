package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Opts returns the client options shared by every client of this process:
// seeds, client id, SASL, TLS and logging. Callers append their own
// (consumer group, producer settings).
func Opts(c *config.Config, seeds []string, clientID string, log *slog.Logger) ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.ClientID(clientID),
		kgo.WithLogger(NewLogger(log)),
		// Fail fast on a dead broker at start-up instead of retrying forever;
		// record-level retries are bounded separately by the callers.
		kgo.DialTimeout(5 * time.Second),
		// A produce batch that gets a retriable error waits for a metadata
		// refresh before it is sent again, and franz-go spaces refreshes at
		// least MetadataMinAge apart (default 5s). With transactions v2
		// (Kafka 4) the first batch to a partition in a new transaction can
		// get CONCURRENT_TRANSACTIONS while the previous transaction's
		// markers are written, so every few transactions the joiner's
		// whole transaction stalled for 5s (bench joiner: 7s runs instead of
		// 1.5s). Refreshes still happen only on errors.
		kgo.MetadataMinAge(250 * time.Millisecond),
		// Every client reports whether its brokers answer: /healthz and the
		// progress line show a broker outage as one.
		kgo.WithHooks(Reach),
		// Every record to a catalog topic names its message type and
		// schema version in its headers.
		kgo.WithHooks(NewEventHeaders(topics.New(topics.WithPrefix(c.TopicPrefix)))),
	}
	sec := c.Kafka
	switch sec.SASLMechanism {
	case "":
	case "plain":
		opts = append(opts, kgo.SASL(plain.Auth{User: sec.SASLUser, Pass: sec.SASLPassword.Reveal()}.AsMechanism()))
	case "scram-sha-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: sec.SASLUser, Pass: sec.SASLPassword.Reveal()}.AsSha256Mechanism()))
	case "scram-sha-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: sec.SASLUser, Pass: sec.SASLPassword.Reveal()}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("unable to configure SASL: unknown mechanism %q", sec.SASLMechanism)
	}
	if sec.TLS {
		tc, err := tlsConfig(sec)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	return opts, nil
}

func tlsConfig(sec config.KafkaSecurity) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: sec.TLSServerName}
	if sec.TLSCAFile != "" {
		pem, err := os.ReadFile(sec.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("unable to read Kafka TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("unable to read Kafka TLS CA %s: no PEM certificates", sec.TLSCAFile)
		}
		tc.RootCAs = pool
	}
	if sec.TLSCertFile != "" {
		cert, err := tls.LoadX509KeyPair(sec.TLSCertFile, sec.TLSKeyFile)
		if err != nil {
			return nil, fmt.Errorf("unable to load Kafka TLS client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// Ping checks that at least one seed broker answers within timeout; it gives
// the one clear error a user sees when the broker is down or misconfigured.
func Ping(ctx context.Context, cl *kgo.Client, seeds []string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne):
			return fmt.Errorf("unable to reach Kafka at %s within %s (is it running? infra/kafka.sh start): %w", strings.Join(seeds, ","), timeout, err)
		default:
			return fmt.Errorf("unable to reach Kafka at %s: %w", strings.Join(seeds, ","), err)
		}
	}
	return nil
}
