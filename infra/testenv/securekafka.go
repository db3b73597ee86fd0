package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
)

// SecureBroker is a private single-node broker whose client listener is
// SASL_SSL with SCRAM-SHA-512 (infra/kafka.sh with KAFKA_SECURE=1): its CA
// and certificate made with openssl, its user created by Kafka's own
// storage tool.
type SecureBroker struct {
	*Broker
	// CAFile is the PEM CA that signed the broker's certificate; User and
	// Password the SCRAM credentials of the clients' user.
	CAFile, User, Password string
}

// PrivateSecureBroker starts it for the test and stops it at the end.
func PrivateSecureBroker(t testing.TB) *SecureBroker {
	t.Helper()
	Integration(t)
	dir := t.TempDir()
	b := &Broker{launch.NewCluster(dir, launch.RepoDir(), 1, "KAFKA_SECURE=1")}
	b.Start(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("secure broker's log: %s", b.LogFile())
		}
		_ = b.Down()
	})
	pw, err := os.ReadFile(filepath.Join(dir, "kafka", "scram", "asyncwebrl"))
	if err != nil {
		t.Fatalf("unable to read the secure broker's password: %v", err)
	}
	return &SecureBroker{Broker: b, CAFile: filepath.Join(dir, "kafka", "tls", "ca.pem"), User: "asyncwebrl",
		Password: strings.TrimSpace(string(pw))}
}

// Flags are the binary's flags for it, without the password (pass it as
// ASYNCWEBRL_KAFKA_SASL_PASSWORD: a flag shows in ps).
func (b *SecureBroker) Flags() []string {
	return []string{"-brokers=" + b.Addr, "-kafka-sasl-mechanism=scram-sha-512", "-kafka-sasl-user=" + b.User,
		"-kafka-tls", "-kafka-tls-ca=" + b.CAFile}
}
