package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	yamlv3 "gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// scaledObject mirrors the fields of KEDA's keda.sh/v1alpha1 ScaledObject
// (github.com/kedacore/keda/v2, apis/keda/v1alpha1/scaledobject_types.go
// and scaletriggers_types.go) with the same JSON names, so that a strict
// decode rejects what KEDA's CRD schema would. KEDA's module is not
// imported: its apis package also holds the admission webhooks, which pull
// controller-runtime, client-go, expr and KEDA's metrics collector.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              scaledObjectSpec `json:"spec"`
}

type scaledObjectSpec struct {
	ScaleTargetRef        *scaleTarget    `json:"scaleTargetRef"`
	PollingInterval       *int32          `json:"pollingInterval,omitempty"`
	InitialCooldownPeriod *int32          `json:"initialCooldownPeriod,omitempty"`
	CooldownPeriod        *int32          `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount      *int32          `json:"idleReplicaCount,omitempty"`
	MinReplicaCount       *int32          `json:"minReplicaCount,omitempty"`
	MaxReplicaCount       *int32          `json:"maxReplicaCount,omitempty"`
	Advanced              *advancedConfig `json:"advanced,omitempty"`
	Triggers              []scaleTrigger  `json:"triggers"`
	Fallback              *struct {
		FailureThreshold int32  `json:"failureThreshold"`
		Replicas         int32  `json:"replicas"`
		Behavior         string `json:"behavior,omitempty"`
	} `json:"fallback,omitempty"`
}

type scaleTarget struct {
	Name                   string `json:"name"`
	APIVersion             string `json:"apiVersion,omitempty"`
	Kind                   string `json:"kind,omitempty"`
	EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
}

type advancedConfig struct {
	HorizontalPodAutoscalerConfig *struct {
		Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
		Name     string                                         `json:"name,omitempty"`
	} `json:"horizontalPodAutoscalerConfig,omitempty"`
	RestoreToOriginalReplicaCount bool `json:"restoreToOriginalReplicaCount,omitempty"`
}

type scaleTrigger struct {
	Type              string            `json:"type"`
	Name              string            `json:"name,omitempty"`
	UseCachedMetrics  bool              `json:"useCachedMetrics,omitempty"`
	Metadata          map[string]string `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
		Kind string `json:"kind,omitempty"`
	} `json:"authenticationRef,omitempty"`
	MetricType autoscalingv2.MetricTargetType `json:"metricType,omitempty"`
}

// kustomization is the part of kustomize's Kustomization the directory
// uses: the list of its files.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// k8sObjects is every object of infra/k8s by kind and name.
type k8sObjects struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	claims      map[string]*corev1.PersistentVolumeClaim
	jobs        map[string]*batchv1.Job
	scaled      map[string]*scaledObject
}

// decodeStrict decodes one YAML document into obj the way the API server
// does: duplicate keys, unknown fields and keys that match a field only
// when case is ignored are errors.
func decodeStrict(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, obj)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// splitDocs splits a YAML stream at its "---" lines and drops the
// documents that hold only comments.
func splitDocs(b []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		for _, line := range strings.Split(cur.String(), "\n") {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, slices.Clone(cur.Bytes()))
				break
			}
		}
		cur.Reset()
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimRight(line, " \r\n") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return docs
}

// decodeManifests decodes the files kustomization.yaml lists in dir, each
// document strictly into the API type its apiVersion and kind name.
func decodeManifests(dir string) (*k8sObjects, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k kustomization
	if err := decodeStrict(raw, &k); err != nil {
		return nil, fmt.Errorf("kustomization.yaml: %w", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		return nil, fmt.Errorf("kustomization.yaml is %s %s", k.APIVersion, k.Kind)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(k.Resources, base) {
			return nil, fmt.Errorf("%s is not listed in kustomization.yaml: kubectl apply -k would leave it out", base)
		}
	}
	o := &k8sObjects{
		deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{},
		configMaps: map[string]*corev1.ConfigMap{}, claims: map[string]*corev1.PersistentVolumeClaim{},
		jobs: map[string]*batchv1.Job{}, scaled: map[string]*scaledObject{},
	}
	for _, name := range k.Resources {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		for i, doc := range splitDocs(b) {
			if err := o.add(doc); err != nil {
				return nil, fmt.Errorf("%s, document %d: %w", name, i+1, err)
			}
		}
	}
	return o, nil
}

func (o *k8sObjects) add(doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	var err error
	switch gvk := tm.APIVersion + " " + tm.Kind; gvk {
	case "apps/v1 Deployment":
		err = decodeInto(doc, o.deployments, func(v *appsv1.Deployment) string { return v.Name })
	case "v1 Service":
		err = decodeInto(doc, o.services, func(v *corev1.Service) string { return v.Name })
	case "v1 ConfigMap":
		err = decodeInto(doc, o.configMaps, func(v *corev1.ConfigMap) string { return v.Name })
	case "v1 PersistentVolumeClaim":
		err = decodeInto(doc, o.claims, func(v *corev1.PersistentVolumeClaim) string { return v.Name })
	case "batch/v1 Job":
		err = decodeInto(doc, o.jobs, func(v *batchv1.Job) string { return v.Name })
	case "keda.sh/v1alpha1 ScaledObject":
		err = decodeInto(doc, o.scaled, func(v *scaledObject) string { return v.Name })
	default:
		return fmt.Errorf("unexpected kind %q", gvk)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", tm.Kind, err)
	}
	return nil
}

// decodeInto decodes doc strictly into a new T and files it under its name.
func decodeInto[T any](doc []byte, m map[string]*T, name func(*T) string) error {
	v := new(T)
	if err := decodeStrict(doc, v); err != nil {
		return err
	}
	n := name(v)
	if n == "" {
		return errors.New("no metadata.name")
	}
	if _, dup := m[n]; dup {
		return fmt.Errorf("%q defined twice", n)
	}
	m[n] = v
	return nil
}

// binaryEnv is every environment variable the binary reads: each flag's
// ASYNCWEBRL_* name (config.Parse asks its getenv for them), the joiner's
// and recorder's knobs, ONNX Runtime's library path.
func binaryEnv(t *testing.T) map[string]bool {
	t.Helper()
	seen := map[string]bool{policy.EnvLibraryPath: true}
	rec := func(k string) string { seen[k] = true; return "" }
	if _, err := config.Parse(nil, rec, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := cmdkit.JoinerOptions(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := recorderOptions(rec); err != nil {
		t.Fatal(err)
	}
	return seen
}

// scaling is what each scaled target consumes: its group (under an empty
// -topic-prefix) and the topics the group reads.
var scaling = map[string]struct {
	group  string
	topics []string
}{
	"actor":  {"actor", []string{topics.Tasks}},
	"joiner": {"joiner", []string{topics.Obs, topics.Actions, topics.Rewards}},
	// The recorder reads every topic of the catalog.
	"recorder": {"recorder", nil},
}

// k8sRef is what the manifests are checked against: the binary and
// compose.yaml.
type k8sRef struct {
	env        map[string]bool // names the binary reads
	image      string          // compose.yaml's asyncwebrl image
	composeEnv []string        // the env names compose.yaml gives every asyncwebrl service
}

// checkManifests returns every broken cross reference.
func checkManifests(o *k8sObjects, ref k8sRef) []error {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	cm, ok := o.configMaps["asyncwebrl"]
	if !ok {
		return []error{errors.New("no ConfigMap asyncwebrl")}
	}
	for k := range cm.Data {
		if !ref.env[k] {
			fail("ConfigMap asyncwebrl: %s is no flag or variable of the binary", k)
		}
	}
	// The values must be what the binary accepts: parse them as it does.
	cfg, err := config.Parse(nil, func(k string) string { return cm.Data[k] }, io.Discard)
	if err != nil {
		return append(errs, fmt.Errorf("ConfigMap asyncwebrl does not parse: %w", err))
	}
	portOf := func(addr string) int32 {
		_, p, _ := net.SplitHostPort(addr)
		n, _ := strconv.Atoi(p)
		return int32(n)
	}
	adminPort := portOf(cfg.AdminAddr)
	catalog := topics.New(topics.WithPartitions(int32(cfg.TopicPartitions)))

	// A pod's containers and labels, for the Services' selectors.
	type pod struct {
		owner  string
		labels map[string]string
		spec   *corev1.PodSpec
	}
	var pods []pod
	// checkPod checks one pod template; a service's env names are exactly
	// compose.yaml's, a one-shot's a subset (the topics Job needs no
	// ClickHouse password).
	checkPod := func(owner string, spec *corev1.PodSpec, wantArgs func([]string) bool, exactEnv bool) {
		if len(spec.Containers) != 1 {
			fail("%s: %d containers, want 1", owner, len(spec.Containers))
			return
		}
		c := spec.Containers[0]
		if c.Image != ref.image {
			fail("%s: image %q, compose.yaml runs %q", owner, c.Image, ref.image)
		}
		if !wantArgs(c.Args) {
			fail("%s: args %q", owner, c.Args)
		}
		names := map[string]bool{}
		for _, ef := range c.EnvFrom {
			if ef.ConfigMapRef == nil {
				fail("%s: envFrom other than a ConfigMap", owner)
				continue
			}
			m, ok := o.configMaps[ef.ConfigMapRef.Name]
			if !ok {
				fail("%s: envFrom names no ConfigMap %q", owner, ef.ConfigMapRef.Name)
				continue
			}
			for k := range m.Data {
				names[k] = true
			}
		}
		for _, e := range c.Env {
			if !ref.env[e.Name] {
				fail("%s: env %s is no flag or variable of the binary", owner, e.Name)
			}
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key == "" {
				fail("%s: env %s names no key of its Secret", owner, e.Name)
			}
			names[e.Name] = true
		}
		got := slices.Sorted(maps.Keys(names))
		if exactEnv && !slices.Equal(got, ref.composeEnv) || !exactEnv && slices.ContainsFunc(got, func(n string) bool { return !slices.Contains(ref.composeEnv, n) }) {
			fail("%s: env names %v, compose.yaml sets %v", owner, got, ref.composeEnv)
		}
		volumes := map[string]bool{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = true
			if v.PersistentVolumeClaim != nil && o.claims[v.PersistentVolumeClaim.ClaimName] == nil {
				fail("%s: volume %s claims %q, which no PersistentVolumeClaim defines", owner, v.Name, v.PersistentVolumeClaim.ClaimName)
			}
		}
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				fail("%s: mounts volume %q, which the pod does not have", owner, m.Name)
			}
		}
	}
	// containerPort is the number a probe's or a Service's port names in
	// c, or 0 when it names none.
	containerPort := func(c *corev1.Container, p intstr.IntOrString) int32 {
		for _, cp := range c.Ports {
			if p.Type == intstr.String && cp.Name == p.StrVal || p.Type == intstr.Int && cp.ContainerPort == p.IntVal {
				return cp.ContainerPort
			}
		}
		return 0
	}

	for _, target := range config.KnownTargets {
		d, ok := o.deployments[target]
		if !ok {
			fail("target %s has no Deployment", target)
			continue
		}
		owner := "Deployment " + target
		spec := &d.Spec.Template.Spec
		if d.Spec.Selector == nil || len(d.Spec.Selector.MatchLabels) == 0 || !selects(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			fail("%s: its selector does not select its own pods", owner)
		}
		pods = append(pods, pod{owner, d.Spec.Template.Labels, spec})
		checkPod(owner, spec, func(a []string) bool { return slices.Equal(a, []string{"-target=" + target}) }, true)
		if len(spec.Containers) != 1 {
			continue
		}
		c := &spec.Containers[0]
		if containerPort(c, intstr.FromString("admin")) != adminPort {
			fail("%s: no container port \"admin\" %d (ASYNCWEBRL_ADMIN_ADDR %s)", owner, adminPort, cfg.AdminAddr)
		}
		listens := map[string]string{"webenv": cfg.WebenvAddr, "dashboard": cfg.DashboardAddr}
		if addr, ok := listens[target]; ok && containerPort(c, intstr.FromInt32(portOf(addr))) == 0 {
			fail("%s: listens on %s, and no container port says so", owner, addr)
		}
		for kind, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
			if p == nil || p.HTTPGet == nil {
				fail("%s: no %s probe over HTTP", owner, kind)
				continue
			}
			if p.HTTPGet.Path != "/healthz" || containerPort(c, p.HTTPGet.Port) != adminPort {
				fail("%s: %s probe asks %s on port %s, not /healthz on the admin port %d", owner, kind, p.HTTPGet.Path, p.HTTPGet.Port.String(), adminPort)
			}
		}
		if g := spec.TerminationGracePeriodSeconds; g == nil || float64(*g) <= cfg.StopTimeout.Seconds() {
			fail("%s: terminationGracePeriodSeconds %v is not longer than -stop-timeout %s: the drain would be killed", owner, g, cfg.StopTimeout)
		}
	}
	for name := range o.deployments {
		if !slices.Contains(config.KnownTargets, name) {
			fail("Deployment %s is no target of the binary", name)
		}
	}
	// Two learners would both train and publish versions of one policy.
	if d, ok := o.deployments["learner"]; ok {
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			fail("Deployment learner: want 1 replica and the Recreate strategy")
		}
	}

	for name, j := range o.jobs {
		owner := "Job " + name
		pods = append(pods, pod{owner, j.Spec.Template.Labels, &j.Spec.Template.Spec})
		checkPod(owner, &j.Spec.Template.Spec, func(a []string) bool { return len(a) > 0 && slices.Contains(config.Subcommands, a[0]) }, false)
	}

	for name, s := range o.services {
		var selected []pod
		for _, p := range pods {
			if len(s.Spec.Selector) > 0 && selects(s.Spec.Selector, p.labels) {
				selected = append(selected, p)
			}
		}
		if len(selected) == 0 {
			fail("Service %s selects no pod", name)
		}
		for _, sp := range s.Spec.Ports {
			for _, p := range selected {
				if len(p.spec.Containers) == 1 && containerPort(&p.spec.Containers[0], sp.TargetPort) == 0 {
					fail("Service %s: port %s targets %s, which %s does not expose", name, sp.Name, sp.TargetPort.String(), p.owner)
				}
			}
		}
	}
	// The actors reach webenv at ASYNCWEBRL_WEBENV_URL: a Service of that
	// name and port.
	if u, err := url.Parse(cfg.WebenvURL); err != nil {
		fail("ASYNCWEBRL_WEBENV_URL %q: %v", cfg.WebenvURL, err)
	} else if s, ok := o.services[u.Hostname()]; !ok {
		fail("ASYNCWEBRL_WEBENV_URL %s: no Service %s", cfg.WebenvURL, u.Hostname())
	} else {
		port, _ := strconv.Atoi(u.Port())
		if !slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return p.Port == int32(port) }) {
			fail("ASYNCWEBRL_WEBENV_URL %s: Service %s has no port %d", cfg.WebenvURL, u.Hostname(), port)
		}
	}

	scaledTargets := map[string]bool{}
	for name, so := range o.scaled {
		owner := "ScaledObject " + name
		ref := so.Spec.ScaleTargetRef
		if ref == nil || (ref.Kind != "" && ref.Kind != "Deployment") || (ref.APIVersion != "" && ref.APIVersion != "apps/v1") {
			fail("%s: scales no Deployment", owner)
			continue
		}
		d, ok := o.deployments[ref.Name]
		if !ok {
			fail("%s: scales Deployment %q, which does not exist", owner, ref.Name)
			continue
		}
		scaledTargets[ref.Name] = true
		want, ok := scaling[ref.Name]
		if !ok {
			fail("%s: %s is no consumer group to scale on lag", owner, ref.Name)
			continue
		}
		// The most partitions any topic of the group has is the most
		// members that can get work.
		partitions := int32(0)
		for _, s := range catalog.Specs {
			if want.topics == nil || slices.Contains(want.topics, s.Name) {
				partitions = max(partitions, s.Partitions)
			}
		}
		lo, hi := so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount
		if hi == nil || *hi < 1 || *hi > partitions {
			fail("%s: maxReplicaCount %v, want 1..%d (the partitions of its group's topics)", owner, deref(hi), partitions)
		} else if lo == nil || *lo < 1 || *lo > *hi {
			fail("%s: minReplicaCount %v, want 1..%d", owner, deref(lo), *hi)
		} else if r := d.Spec.Replicas; r == nil || *r < *lo || *r > *hi {
			fail("%s: Deployment %s starts with %v replicas, outside %d..%d", owner, ref.Name, deref(r), *lo, *hi)
		}
		if len(so.Spec.Triggers) == 0 {
			fail("%s: no trigger", owner)
		}
		for _, tr := range so.Spec.Triggers {
			m := tr.Metadata
			if tr.Type != "kafka" {
				fail("%s: trigger %q, want kafka (lag)", owner, tr.Type)
				continue
			}
			if m["bootstrapServers"] != strings.Join(cfg.Brokers, ",") {
				fail("%s: bootstrapServers %q, the ConfigMap's brokers are %q", owner, m["bootstrapServers"], strings.Join(cfg.Brokers, ","))
			}
			if m["consumerGroup"] != want.group {
				fail("%s: consumerGroup %q, %s joins %q", owner, m["consumerGroup"], ref.Name, want.group)
			}
			if tp := m["topic"]; tp != "" {
				if want.topics != nil && !slices.Contains(want.topics, tp) {
					fail("%s: topic %q is not one %s reads %v", owner, tp, ref.Name, want.topics)
				} else if s, err := catalog.Spec(tp); err != nil {
					fail("%s: topic %q: %v", owner, tp, err)
				} else if hi != nil && *hi > s.Partitions {
					fail("%s: maxReplicaCount %d over the %d partitions of %s", owner, *hi, s.Partitions, tp)
				}
			}
			if n, err := strconv.Atoi(m["lagThreshold"]); err != nil || n < 1 {
				fail("%s: lagThreshold %q, want a positive integer", owner, m["lagThreshold"])
			}
			if m["allowIdleConsumers"] == "true" {
				fail("%s: allowIdleConsumers would scale past the partitions", owner)
			}
		}
	}
	for target := range scaling {
		if !scaledTargets[target] {
			fail("%s is not scaled on its lag", target)
		}
	}
	return errs
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func deref(p *int32) any {
	if p == nil {
		return "unset"
	}
	return *p
}

// k8sReference reads what the manifests must agree with: the binary's
// variables and compose.yaml's asyncwebrl services (their image, and the
// env names they all get).
func k8sReference(t *testing.T) k8sRef {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yamlv3.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	ref := k8sRef{env: binaryEnv(t)}
	for i, target := range config.KnownTargets {
		s := c.Services[target]
		names := slices.Sorted(maps.Keys(s.Environment))
		if i == 0 {
			ref.image, ref.composeEnv = s.Image, names
		} else if s.Image != ref.image || !slices.Equal(names, ref.composeEnv) {
			t.Fatalf("compose.yaml: %s runs %s with %v, %s runs %s with %v", target, s.Image, names, config.KnownTargets[0], ref.image, ref.composeEnv)
		}
	}
	return ref
}

// TestK8sManifests decodes every file of infra/k8s strictly into its API
// type (apps/v1 Deployment, core/v1 Service, ConfigMap and
// PersistentVolumeClaim, batch/v1 Job, KEDA's ScaledObject) and checks
// that they fit together and with the binary and compose.yaml: one
// Deployment per target running compose.yaml's image with -target, env
// names that are the binary's and the same as compose.yaml's, ConfigMap
// values the binary parses, container ports where the addresses listen,
// probes on /healthz at the admin port, Services whose target ports exist
// in the pods they select, ScaledObjects that scale actors, joiners and
// recorders on their groups' lag with at most as many replicas as
// partitions.
func TestK8sManifests(t *testing.T) {
	o, err := decodeManifests(filepath.Join(repoRoot, "infra", "k8s"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkManifests(o, k8sReference(t)) {
		t.Error(err)
	}
	t.Logf("%d Deployments, %d Services, %d ConfigMaps, %d claims, %d Jobs, %d ScaledObjects",
		len(o.deployments), len(o.services), len(o.configMaps), len(o.claims), len(o.jobs), len(o.scaled))
}

// The decoder and the checks catch what they are there for: each broken
// manifest below is rejected with the reason.
func TestK8sManifestChecksCatchMistakes(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replica: 2}\n", `unknown field "spec.replica"`},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {Replicas: 2}\n", `unknown field "spec.Replicas"`},
		{"apiVersion: v1\nkind: Service\nmetadata: {name: x, name: y}\n", `key "name" already set`},
		{"apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: x}\nspec: {maxReplicas: 3}\n", `unknown field "spec.maxReplicas"`},
		{"apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n", `unexpected kind`},
	} {
		o := &k8sObjects{deployments: map[string]*appsv1.Deployment{}, services: map[string]*corev1.Service{}, scaled: map[string]*scaledObject{}}
		if err := o.add([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.doc, err, tc.want)
		}
	}

	ref := k8sReference(t)
	dir := filepath.Join(repoRoot, "infra", "k8s")
	for _, tc := range []struct {
		name   string
		break_ func(*k8sObjects)
		want   string
	}{
		{"image", func(o *k8sObjects) { o.deployments["joiner"].Spec.Template.Spec.Containers[0].Image = "asyncwebrl:old" }, "image"},
		{"unknown env", func(o *k8sObjects) {
			c := &o.deployments["actor"].Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "ASYNCWEBRL_EXECUTOR", Value: "8"})
		}, "ASYNCWEBRL_EXECUTOR is no flag"},
		{"configmap key", func(o *k8sObjects) { o.configMaps["asyncwebrl"].Data["ASYNCWEBRL_BROKER"] = "x:1" }, "ASYNCWEBRL_BROKER is no flag"},
		{"configmap value", func(o *k8sObjects) { o.configMaps["asyncwebrl"].Data["ASYNCWEBRL_ADMIN_ADDR"] = "7070" }, "does not parse"},
		{"probe path", func(o *k8sObjects) {
			o.deployments["recorder"].Spec.Template.Spec.Containers[0].LivenessProbe.HTTPGet.Path = "/health"
		}, "liveness probe asks /health"},
		{"probe port", func(o *k8sObjects) {
			o.deployments["learner"].Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Port = intstr.FromInt32(8080)
		}, "readiness probe"},
		{"admin port", func(o *k8sObjects) {
			o.deployments["reporter"].Spec.Template.Spec.Containers[0].Ports[0].ContainerPort = 9090
		}, `no container port "admin"`},
		{"service port", func(o *k8sObjects) { o.services["webenv"].Spec.Ports[0].TargetPort = intstr.FromString("web") }, "targets web"},
		{"webenv url", func(o *k8sObjects) { o.configMaps["asyncwebrl"].Data["ASYNCWEBRL_WEBENV_URL"] = "http://tasks:18080" }, "no Service tasks"},
		{"max replicas", func(o *k8sObjects) { *o.scaled["joiner"].Spec.MaxReplicaCount = 7 }, "maxReplicaCount 7"},
		{"scale target", func(o *k8sObjects) { o.scaled["actor"].Spec.ScaleTargetRef.Name = "actors" }, `"actors", which does not exist`},
		{"group", func(o *k8sObjects) { o.scaled["recorder"].Spec.Triggers[0].Metadata["consumerGroup"] = "recorders" }, `consumerGroup "recorders"`},
		{"brokers", func(o *k8sObjects) { o.scaled["actor"].Spec.Triggers[0].Metadata["bootstrapServers"] = "kafka-0:9092" }, "bootstrapServers"},
		{"unscaled", func(o *k8sObjects) { delete(o.scaled, "recorder") }, "recorder is not scaled"},
		{"two learners", func(o *k8sObjects) { *o.deployments["learner"].Spec.Replicas = 2 }, "Deployment learner"},
		{"grace", func(o *k8sObjects) { *o.deployments["joiner"].Spec.Template.Spec.TerminationGracePeriodSeconds = 30 }, "terminationGracePeriodSeconds"},
		{"claim", func(o *k8sObjects) { delete(o.claims, "learner-state") }, "learner-state"},
		{"missing target", func(o *k8sObjects) { delete(o.deployments, "dashboard") }, "target dashboard has no Deployment"},
		{"password", func(o *k8sObjects) { o.deployments["recorder"].Spec.Template.Spec.Containers[0].Env = nil }, "Deployment recorder: env names"},
		{"job env", func(o *k8sObjects) {
			c := &o.jobs["topics"].Spec.Template.Spec.Containers[0]
			c.Env = append(c.Env, corev1.EnvVar{Name: "ASYNCWEBRL_EXECUTORS", Value: "8"})
		}, "Job topics: env names"},
	} {
		o, err := decodeManifests(dir)
		if err != nil {
			t.Fatal(err)
		}
		tc.break_(o)
		errs := checkManifests(o, ref)
		if !slices.ContainsFunc(errs, func(e error) bool { return strings.Contains(e.Error(), tc.want) }) {
			t.Errorf("%s: errors %v, want one with %q", tc.name, errs, tc.want)
		}
	}
}
