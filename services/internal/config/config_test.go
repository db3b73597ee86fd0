package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseDefaultsAndPrecedence(t *testing.T) {
	c, err := Parse(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Targets) != len(KnownTargets) || c.Brokers[0] != "127.0.0.1:19092" || c.Embedded() {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = Parse([]string{"-brokers", "b1:9092,b2:9092", "-target", "joiner,actor"},
		env(map[string]string{"ASYNCWEBRL_BROKERS": "envbroker:1", "ASYNCWEBRL_TOPIC_PREFIX": "exp7."}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Brokers, ",") != "b1:9092,b2:9092" {
		t.Fatalf("flag should win over env: %v", c.Brokers)
	}
	if c.TopicPrefix != "exp7." {
		t.Fatalf("env not applied: %q", c.TopicPrefix)
	}
	if strings.Join(c.Targets, ",") != "actor,joiner" {
		t.Fatalf("targets should come in start order: %v", c.Targets)
	}
	c, err = Parse(nil, env(map[string]string{"PYROSCOPE_SERVER_ADDRESS": "http://pyro:4040"}), io.Discard)
	if err != nil || c.Pyroscope.Address != "http://pyro:4040" {
		t.Fatalf("PYROSCOPE_SERVER_ADDRESS not honoured: %v %v", c, err)
	}
	c, err = Parse([]string{"-brokers=embedded"}, env(nil), io.Discard)
	if err != nil || !c.Embedded() {
		t.Fatalf("embedded: %v %v", c, err)
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"-target", "frobnicator"}, nil, `unknown target "frobnicator"`},
		{[]string{"-target", ""}, nil, "invalid -target"},
		{[]string{"-brokers", "nohostport"}, nil, "invalid -brokers entry"},
		{[]string{"-brokers", "embedded,b:1"}, nil, "cannot be combined"},
		{[]string{"-stop-timeout", "soon"}, nil, "invalid value"},
		{[]string{"-log-level", "loud"}, nil, "invalid -log-level"},
		{[]string{"-log-format", "xml"}, nil, "invalid -log-format"},
		{[]string{"-kafka-sasl-mechanism", "gssapi"}, nil, "invalid -kafka-sasl-mechanism"},
		{[]string{"-kafka-sasl-mechanism", "scram-sha-512", "-kafka-sasl-user", "u"}, nil, "needs a user and a password"},
		{[]string{"-kafka-tls-cert", "c.pem"}, nil, "go together"},
		{[]string{"-topic-partitions", "0"}, nil, "invalid -topic-partitions"},
		{[]string{"stray"}, nil, `unexpected argument "stray"`},
		{[]string{"-ablate", "vision,colour"}, nil, `invalid -ablate: unknown ablation "colour"`},
		{[]string{"-demo-mix", "1.5"}, nil, "invalid -demo-mix"},
		{[]string{"-grpo-norm", "episode"}, nil, "invalid -grpo-norm"},
		{[]string{"-lm-temperature", "0"}, nil, "invalid -lm-temperature"},
		{[]string{"-keep-checkpoint-every", "-1"}, nil, "invalid -keep-checkpoint-every"},
		{nil, map[string]string{"ASYNCWEBRL_LM_TEMPERATURE": "99"}, "invalid -lm-temperature"},
		{nil, map[string]string{"ASYNCWEBRL_STOP_TIMEOUT": "forever"}, "invalid ASYNCWEBRL_STOP_TIMEOUT"},
		{nil, map[string]string{"ASYNCWEBRL_ADMIN_ADDR": "7070"}, "invalid -admin-addr"},
	}
	for _, c := range cases {
		_, err := Parse(c.args, env(c.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%v, %v) err = %v, want containing %q", c.args, c.env, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("error spans lines: %q", err)
		}
	}
}

// TestSecretsNeverPrint checks every way a config reaches text: slog text
// and JSON handlers, fmt verbs and encoding/json.
func TestSecretsNeverPrint(t *testing.T) {
	const pw, chpw = "hunter2-kafka-pass", "s3cr3t-clickhouse"
	c, err := Parse([]string{"-kafka-sasl-mechanism", "scram-sha-256", "-kafka-sasl-user", "svc"},
		env(map[string]string{"ASYNCWEBRL_KAFKA_SASL_PASSWORD": pw, "ASYNCWEBRL_CLICKHOUSE_PASSWORD": chpw}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Kafka.SASLPassword.Reveal() != pw || c.ClickHouse.Password.Reveal() != chpw {
		t.Fatal("secrets not parsed")
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("cfg", "config", c, "kafka", c.Kafka, "pw", c.Kafka.SASLPassword)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("cfg", "config", c, "kafka", c.Kafka, "ch", c.ClickHouse)
	fmt.Fprintf(&buf, "%v %+v %#v %s %v", *c, *c, *c, c.Kafka.SASLPassword, c.ClickHouse)
	j, _ := json.Marshal(c)
	buf.Write(j)
	out := buf.String()
	for _, s := range []string{pw, chpw} {
		if strings.Contains(out, s) {
			t.Fatalf("secret %q printed in: %s", s, out)
		}
	}
	if !strings.Contains(out, "[redacted]") {
		t.Fatalf("expected redaction marker in %s", out)
	}
}
