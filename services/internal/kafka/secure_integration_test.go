package kafka

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// TestIntegrationSCRAMTLS: against a broker whose listener is SASL_SSL with
// SCRAM-SHA-512 (infra/kafka.sh, KAFKA_SECURE=1), the right user, password
// and CA produce and consume; a wrong password, an unknown CA, plaintext
// to the TLS port and TLS without SASL are each refused with one line of
// error that names no password.
func TestIntegrationSCRAMTLS(t *testing.T) {
	b := testenv.PrivateSecureBroker(t)
	seeds := []string{b.Addr}
	right := config.KafkaSecurity{SASLMechanism: "scram-sha-512", SASLUser: b.User, SASLPassword: config.Secret(b.Password),
		TLS: true, TLSCAFile: b.CAFile}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("right credentials", func(t *testing.T) {
		cfg := &config.Config{Kafka: right}
		if err := NewFactory(cfg, seeds, nil).Ping(ctx, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		opts, err := Opts(cfg, seeds, "secure-test", nil)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(append(opts, kgo.ConsumeTopics("secure-test"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "secure-test"); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "secure-test", Value: []byte("over TLS")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "over TLS" {
			t.Fatalf("consumed %d records, want the one produced", len(recs))
		}
	})

	otherCA := filepath.Join(t.TempDir(), "other-ca.pem")
	writeSelfSignedCA(t, otherCA)
	wrongPass, unknownCA, plaintext, noSASL := right, right, right, right
	wrongPass.SASLPassword = config.Secret("not-" + b.Password)
	unknownCA.TLSCAFile = otherCA
	plaintext.TLS = false
	noSASL.SASLMechanism = ""
	for _, tc := range []struct {
		name string
		sec  config.KafkaSecurity
		want string
	}{
		{"wrong password", wrongPass, "SASL_AUTHENTICATION_FAILED"},
		{"unknown CA", unknownCA, "certificate signed by unknown authority"},
		{"plaintext to the TLS port", plaintext, "plaintext connection speaking to a tls endpoint"},
		{"TLS without SASL", noSASL, "SASL is required but not provided"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := NewFactory(&config.Config{Kafka: tc.sec}, seeds, nil).Ping(ctx, 15*time.Second)
			if err == nil {
				t.Fatal("the broker let the client in")
			}
			msg := err.Error()
			t.Logf("refused: %s", msg)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q lacks %q", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			if strings.Contains(msg, b.Password) {
				t.Errorf("error names the password: %q", msg)
			}
		})
	}
}

// writeSelfSignedCA writes a CA certificate nobody signed the broker's
// certificate with.
func writeSelfSignedCA(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
}
