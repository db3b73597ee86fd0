package kafka

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationLagMetrics: the lag /metrics exports for a group is what
// Kafka's own kafka-consumer-groups --describe prints for it (the tool run
// from the broker's jars), partition by partition; a partition without a
// commit has no committed offset.
func TestIntegrationLagMetrics(t *testing.T) {
	kc := kafkatest.Real(t, "lagmetrics", topics.WithPartitions(3))
	topic := kc.Catalog.Name(topics.Tasks)
	group := kc.Catalog.Prefix + "lag-test"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prod, err := kc.NewClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for p, n := range []int{10, 4, 7} {
		for range n {
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("x")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The group committed 6 on partition 0 and 7 (all) on 2; nothing on 1.
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: topic, Partition: 0, At: 6, LeaderEpoch: -1})
	offs.Add(kadm.Offset{Topic: topic, Partition: 2, At: 7, LeaderEpoch: -1})
	if err := kadm.NewClient(kc.Admin).CommitAllOffsets(ctx, group, offs); err != nil {
		t.Fatal(err)
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	lc := NewLagCollector(kc.NewClient, quiet, group)
	defer lc.Close()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(lc)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]map[string]float64{} // metric → partition → value
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var part, g string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "partition":
					part = l.GetValue()
				case "group":
					g = l.GetValue()
				}
			}
			if g != group {
				continue
			}
			if ours[mf.GetName()] == nil {
				ours[mf.GetName()] = map[string]float64{}
			}
			ours[mf.GetName()][part] = m.GetGauge().GetValue()
		}
	}
	if n := testutil.ToFloat64(lc.errors); n != 0 {
		t.Fatalf("%v scrape errors", n)
	}

	// Kafka's own view.
	libs := filepath.Join(testenv.RepoDir(t), ".run", "kafka", "libs", "*")
	cmd := exec.CommandContext(ctx, "java", "-cp", libs, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
		"--bootstrap-server", kc.Seeds[0], "--describe", "--group", group)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kafka-consumer-groups: %v\n%s", err, out)
	}
	rows := 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
		if len(f) < 6 || f[0] != group || f[1] != topic {
			continue
		}
		rows++
		part, current, end, lag := f[2], f[3], f[4], f[5]
		if e, _ := strconv.ParseFloat(end, 64); ours["asyncwebrl_partition_end_offset"][part] != e {
			t.Errorf("partition %s: end offset %v, kafka-consumer-groups %s", part, ours["asyncwebrl_partition_end_offset"][part], end)
		}
		if current == "-" {
			if v, ok := ours["asyncwebrl_consumer_committed_offset"][part]; ok {
				t.Errorf("partition %s: committed %v, kafka-consumer-groups shows none", part, v)
			}
			continue
		}
		if c, _ := strconv.ParseFloat(current, 64); ours["asyncwebrl_consumer_committed_offset"][part] != c {
			t.Errorf("partition %s: committed %v, kafka-consumer-groups %s", part, ours["asyncwebrl_consumer_committed_offset"][part], current)
		}
		if l, _ := strconv.ParseFloat(lag, 64); ours["asyncwebrl_consumer_lag"][part] != l {
			t.Errorf("partition %s: lag %v, kafka-consumer-groups %s", part, ours["asyncwebrl_consumer_lag"][part], lag)
		}
	}
	if rows < 2 {
		t.Fatalf("kafka-consumer-groups described %d partitions of %s:\n%s", rows, topic, out)
	}
	if got := ours["asyncwebrl_consumer_lag"]; got["0"] != 4 || got["2"] != 0 {
		t.Errorf("lag %v, want 4 on partition 0 (10 − 6) and 0 on 2", got)
	}
	t.Logf("kafka-consumer-groups:\n%s", out)
}

// Instrument makes the factory's clients report franz-go's metrics (kprom)
// under asyncwebrl_kafka_, labelled by client.
func TestInstrumentedClients(t *testing.T) {
	c := kafkatest.StartFake(t)
	f := NewFactory(&config.Config{InstanceID: "test"}, c.Seeds, nil)
	reg := prometheus.NewRegistry()
	f.Instrument(reg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Two live clients of one name (the recorder's drain beside its
	// consumer): each gets its own label, no collision.
	for range 2 {
		cl, err := f.NewClient("probe")
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "asyncwebrl_kafka_") {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "client" {
						found[l.GetValue()] = true
					}
				}
			}
		}
	}
	if !found["test/probe"] || !found["test/probe#2"] {
		var names []string
		for _, mf := range mfs {
			names = append(names, mf.GetName())
		}
		t.Fatalf("client labels %v, want test/probe and test/probe#2; metrics %v", found, names)
	}
	// A closed client frees its label for the next one.
	cl, err := f.NewClient("other")
	if err != nil {
		t.Fatal(err)
	}
	cl.Close()
	cl, err = f.NewClient("other")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if f.labels["test/other#2"] || !f.labels["test/other"] {
		t.Errorf("labels after a close and a new client: %v", f.labels)
	}
}
