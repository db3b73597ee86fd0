package learner

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
)

// TestIntegrationBrokerTakesLanguageModelWeights publishes 32 versions of
// the size the language model's are (~26 MB, each a little larger than the
// last, as they grew in the 12-06 hour) through the weights producer to a
// broker started as infra/kafka.sh starts every broker, and reads the
// newest back. On 12-06 the broker's threads each kept a temporary direct
// buffer of every new largest record until its 640 MB of direct memory was
// gone (23 minutes in, about 25 such buffers); from then on it answered
// nothing, and the learner stopped on a commit it could not settle. The
// broker now frees buffers above 1 MiB after use (jdk.nio.maxCachedBufferSize),
// and the test reads its direct buffers' memory (native memory tracking's
// "Other") with jcmd: 1.3 MB after the 32 versions, 240 MB without the
// setting. A private broker, so that a regression cannot take the shared one
// down.
func TestIntegrationBrokerTakesLanguageModelWeights(t *testing.T) {
	jcmd, err := exec.LookPath("jcmd")
	if err != nil {
		t.Fatalf("jcmd not found (infra/setup.sh apt installs openjdk-17-jdk-headless): %v", err)
	}
	broker := testenv.PrivateBrokerEnv(t, "KAFKA_HEAP=-Xmx384M -XX:NativeMemoryTracking=summary")
	kc := kafkatest.On(t, broker.Addrs, "lmw.")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	fx := newWeightsFixture(ctx, t, kc, "lm")
	p := fx.claim("leader")
	lead := func(context.Context) error { return nil }
	const versions, base, step = 32, 26 << 20, 4 << 10
	rng := rand.NewChaCha8([32]byte{1})
	var last string
	for v := uint64(1); v <= versions; v++ {
		// Random bytes: zstd cannot shrink them, so the broker handles
		// records of the full size.
		onnx := make([]byte, base+int(v)*step)
		_, _ = rng.Read(onnx)
		ev, rec := fx.versionOf(v, "leader", onnx)
		last = ev.GetOnnxSha256()
		if err := p.publishSettled(ctx, rec, ev, fx.topic, lead); err != nil {
			t.Fatalf("version %d (%d bytes): %v (broker log: %s)", v, len(onnx), err, broker.LogFile())
		}
	}
	pid, err := broker.PID(1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, jcmd, strconv.Itoa(pid), "VM.native_memory", "summary").CombinedOutput()
	if err != nil {
		t.Fatalf("jcmd %d VM.native_memory summary: %v\n%s", pid, err, out)
	}
	m := regexp.MustCompile(`Other \(reserved=\d+KB, committed=(\d+)KB\)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no Other section in the broker's native memory summary:\n%s", out)
	}
	directKB, _ := strconv.Atoi(string(m[1]))
	t.Logf("the broker's direct buffers after the versions: %d KB", directKB)
	const limitKB = 64 << 10
	if directKB > limitKB {
		t.Errorf("the broker holds %d KB of direct buffers after %d versions; want at most %d KB (each I/O thread keeps the largest record it handled)", directKB, versions, limitKB)
	}
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) { return kc.NewClient(opts...) }
	got, err := weightstopic.Latest(ctx, newClient, fx.topic, "lm", fx.log, nil)
	if err != nil {
		t.Fatalf("unable to read the newest version back: %v", err)
	}
	t.Logf("published %d versions of %d-%d MB; newest read back: version %d", versions, base>>20, (base+versions*step)>>20, got.GetVersion())
	if got.GetVersion() != versions || got.GetOnnxSha256() != last {
		t.Errorf("newest read back: version %d sha %s; want %d %s", got.GetVersion(), got.GetOnnxSha256(), versions, last)
	}
}
