package cli

import (
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// repoRoot is the repository root, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..", "..")

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		Deploy      struct {
			Replicas int `yaml:"replicas"`
		} `yaml:"deploy"`
		Healthcheck struct {
			Test    []string `yaml:"test"`
			Disable bool     `yaml:"disable"`
		} `yaml:"healthcheck"`
		DependsOn map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

// compose.yaml as docker-compose resolves it (anchors and merges applied),
// and what must hold for the stack to start (issue 19): a KRaft cluster id
// of 16 bytes, the Kafka log dirs on the volumes, every target as a service
// with a healthcheck on /healthz, the dashboard published on the address it
// listens on, and Prometheus scraping every service.
func TestComposeFile(t *testing.T) {
	path := filepath.Join(repoRoot, "compose.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if dc, err := exec.LookPath("docker-compose"); err == nil {
		if out, err := exec.Command(dc, "-f", path, "config", "-q").CombinedOutput(); err != nil {
			t.Fatalf("docker-compose config: %v\n%s", err, out)
		}
	} else {
		t.Log("docker-compose not installed: the file is checked by this test only")
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for _, n := range []string{"kafka-1", "kafka-2", "kafka-3"} {
		s := c.Services[n]
		id, err := base64.RawURLEncoding.DecodeString(s.Environment["CLUSTER_ID"])
		if err != nil || len(id) != 16 {
			t.Errorf("%s: CLUSTER_ID %q decodes to %d bytes (%v), want 16", n, s.Environment["CLUSTER_ID"], len(id), err)
		}
		dir := s.Environment["KAFKA_LOG_DIRS"]
		if dir == "" || !slices.Contains(s.Volumes, n+":"+dir) {
			t.Errorf("%s: log dir %q is not the volume %v", n, dir, s.Volumes)
		}
		if s.DependsOn["volumes"].Condition != "service_completed_successfully" {
			t.Errorf("%s starts before its volume is handed to the kafka user", n)
		}
	}
	env := binaryEnv(t)
	for _, target := range config.KnownTargets {
		s, ok := c.Services[target]
		if !ok {
			t.Errorf("target %s has no service", target)
			continue
		}
		if !slices.Equal(s.Command, []string{"-target=" + target}) {
			t.Errorf("%s runs %v", target, s.Command)
		}
		if h := strings.Join(s.Healthcheck.Test, " "); s.Healthcheck.Disable || !strings.Contains(h, "asyncwebrl health") || !strings.Contains(h, "/healthz") {
			t.Errorf("%s: healthcheck %q does not probe /healthz", target, h)
		}
		for k := range s.Environment {
			if !env[k] {
				t.Errorf("%s: %s is no flag or variable of the binary", target, k)
			}
		}
		if p, _ := strconv.Atoi(s.Environment["ASYNCWEBRL_TOPIC_PARTITIONS"]); s.Deploy.Replicas > p {
			t.Errorf("%s: %d replicas, more than the %d partitions of its topics", target, s.Deploy.Replicas, p)
		}
		if s.Environment["ASYNCWEBRL_ADMIN_ADDR"] != "0.0.0.0:7070" {
			t.Errorf("%s: admin on %q, which Prometheus and the healthcheck cannot reach", target, s.Environment["ASYNCWEBRL_ADMIN_ADDR"])
		}
	}
	dash := c.Services["dashboard"]
	_, port, _ := strings.Cut(dash.Environment["ASYNCWEBRL_DASHBOARD_ADDR"], ":")
	if !strings.HasPrefix(dash.Environment["ASYNCWEBRL_DASHBOARD_ADDR"], "0.0.0.0:") || !slices.ContainsFunc(dash.Ports, func(p string) bool { return strings.HasSuffix(p, ":"+port) }) {
		t.Errorf("dashboard listens on %q, published %v", dash.Environment["ASYNCWEBRL_DASHBOARD_ADDR"], dash.Ports)
	}

	prom, err := os.ReadFile(filepath.Join(repoRoot, "infra", "compose", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var pc struct {
		ScrapeConfigs []struct {
			DNS []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(prom, &pc); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	var scraped []string
	for _, sc := range pc.ScrapeConfigs {
		for _, d := range sc.DNS {
			if d.Port == 7070 {
				scraped = append(scraped, d.Names...)
			}
		}
	}
	for _, target := range config.KnownTargets {
		if !slices.Contains(scraped, target) {
			t.Errorf("Prometheus does not scrape %s", target)
		}
	}
	for _, f := range []string{"provisioning/datasources/asyncwebrl.yaml", "provisioning/dashboards/asyncwebrl.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, "infra", "compose", "grafana", f))
		var v map[string]any
		if err == nil {
			err = yaml.Unmarshal(b, &v)
		}
		if err != nil || v["apiVersion"] != 1 {
			t.Errorf("grafana %s: %v (apiVersion %v)", f, err, v["apiVersion"])
		}
	}
}
