package joiner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// member is one joiner process of the group.
type member struct {
	*testenv.Process
	name string
}

func startMember(t *testing.T, bin, dir, name string, seeds []string, prefix string) *member {
	t.Helper()
	p := testenv.Start(t, bin, dir, name, "-target=joiner", "-brokers="+strings.Join(seeds, ","), "-topic-prefix="+prefix,
		"-instance-id="+name, "-admin-addr=127.0.0.1:0", "-log-level=info", "-stop-timeout=60s")
	t.Logf("member %s started (pid %d)", name, p.Cmd.Process.Pid)
	return &member{Process: p, name: name}
}

// restoredState reports whether m rebuilt a non-empty join state.
func restoredState(t *testing.T, m *member) bool {
	t.Helper()
	b, err := os.ReadFile(m.Log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, "join state restored") && !strings.Contains(line, "changelog_records=0 ") {
			return true
		}
	}
	return false
}

func (m *member) lines(t *testing.T, s string) []string {
	t.Helper()
	b, err := os.ReadFile(m.Log)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, s) {
			out = append(out, "  "+line)
		}
	}
	return out
}

// waitLogs waits until every member's log contains s; it fails the test
// with what when ctx ends first.
func waitLogs(ctx context.Context, t *testing.T, s, what string, ms ...*member) {
	t.Helper()
	for _, m := range ms {
		for !m.logContains(t, s) {
			select {
			case <-ctx.Done():
				t.Fatalf("%s %s: %v", m.name, what, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

func (m *member) logContains(t *testing.T, s string) bool {
	t.Helper()
	b, err := os.ReadFile(m.Log)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(s))
}

// TestIntegrationJoinerScaleAndKill is the acceptance test of the joiner on
// the real broker: 200k synthetic records (10% reordered, 5% duplicated, 1%
// malformed) while the group, made of separate asyncwebrl processes, scales
// from 1 to 3 members and back to 1, one of them killed with SIGKILL in the
// middle of its work. Every expected transition must be in the output
// exactly once, made of the right events, every malformed record in the
// dlq, and every episode summarized once.
func TestIntegrationJoinerScaleAndKill(t *testing.T) {
	testenv.Parallel(t)
	kc := kafkatest.Real(t, "j", topics.WithPartitions(6))
	seeds, prefix := kc.Seeds, kc.Catalog.Prefix
	c := newCluster(kc)

	dir := t.TempDir()
	if keep := os.Getenv("ASYNCWEBRL_TEST_KEEP_DIR"); keep != "" {
		dir = keep // the members' logs survive the test
	}
	bin := testenv.Binary(t, dir)

	// A hang guard, not an assertion: a healthy run takes a few minutes on
	// a busy two-core machine.
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()

	m1 := startMember(t, bin, dir, "m1", seeds, prefix)
	var (
		mu      sync.Mutex
		m2, m3  *member
		stage   int
		stageCh = make(chan int, 3)
		// scaledUp holds the load back until the two new members own
		// partitions: the scaling is then real, whatever the machine's
		// speed. It must not wait for them to commit: with the load
		// held, m1 may already have joined everything sent, and a member
		// with nothing to consume never commits (the load would wait for
		// the members and the members for the load).
		scaledUp = make(chan struct{})
	)
	load := loadtest.DefaultConfig(200000)
	load.Rate = 3500
	// Scaling follows the load's progress, not the clock.
	load.Progress = func(sent, total int) {
		mu.Lock()
		for stage < 3 && sent >= total*(stage+1)/4 {
			stage++
			stageCh <- stage
		}
		gate := stage == 1
		mu.Unlock()
		if gate {
			select {
			case <-scaledUp:
			case <-ctx.Done():
			}
		}
	}
	prod, err := c.factory.NewClient("load")
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	type genResult struct {
		exp *loadtest.Expected
		err error
	}
	genDone := make(chan genResult, 1)
	go func() {
		exp, err := loadtest.Generate(ctx, prod, c.catalog, load)
		genDone <- genResult{exp, err}
	}()

	handled := 0
	handle := func(s int) {
		handled = s
		switch s {
		case 1: // 1 -> 3
			mu.Lock()
			m2 = startMember(t, bin, dir, "m2", seeds, prefix)
			m3 = startMember(t, bin, dir, "m3", seeds, prefix)
			mu.Unlock()
			waitLogs(ctx, t, "partitions assigned", "were never assigned partitions", m2, m3)
			close(scaledUp)
			t.Logf("m2 and m3 are joining")
		case 2: // one member dies mid-work
			// The load runs again: the new members have records to
			// join, so they commit; m2 dies only after it has worked.
			waitLogs(ctx, t, "first transaction of the assignment committed", "never committed a transaction", m2, m3)
			if err := m2.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			t.Logf("m2 killed with SIGKILL")
		case 3: // 2 -> 1, gracefully
			if err := m3.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			<-m3.Done
			if m3.Err != nil {
				t.Fatalf("m3 did not stop cleanly: %v", m3.Err)
			}
			t.Logf("m3 stopped with SIGTERM")
		}
	}
	var gen genResult
	for gen.exp == nil && gen.err == nil {
		select {
		case s := <-stageCh:
			handle(s)
		case gen = <-genDone:
		}
	}
	if gen.err != nil {
		t.Fatal(gen.err)
	}
	for handled < 3 && len(stageCh) > 0 {
		handle(<-stageCh)
	}
	exp := gen.exp
	if handled < 3 {
		t.Fatalf("the load finished before the group was scaled (stage %d)", handled)
	}
	t.Logf("load done: %d records, %d events, %d duplicates, %d reordered, %d malformed, %d transitions expected",
		exp.Records, exp.Events, exp.Duplicates, exp.Reordered, len(exp.Malformed), len(exp.Transitions))

	if _, err := kafka.WaitCaughtUp(ctx, c.newClient, prefix+"joiner", c.catalog.Inputs()); err != nil {
		t.Fatal(err)
	}
	rep, err := loadtest.Verify(ctx, c.newClient, c.catalog, exp)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("verifier: %s", rep)
	if !rep.OK() {
		t.Fatalf("the joiner lost, duplicated or misjoined data: %s", rep)
	}
	if rep.MalformedExpected < 1000 || exp.Duplicates < 5000 || exp.Reordered < 10000 {
		t.Fatalf("the load was not spoiled as asked: %d malformed, %d duplicates, %d reordered", rep.MalformedExpected, exp.Duplicates, exp.Reordered)
	}

	// The scenario really happened: the killed member owned partitions,
	// and the survivors took over join state from the changelog.
	if !m2.logContains(t, "join state restored") {
		t.Fatal("m2 never owned partitions before it was killed")
	}
	for _, m := range []*member{m1, m2, m3} {
		t.Logf("%s restores:\n%s", m.name, strings.Join(m.lines(t, "join state restored"), "\n"))
	}
	if !restoredState(t, m1) {
		t.Fatal("m1 never restored join state written by another member")
	}

	if err := m1.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-m1.Done
	if m1.Err != nil {
		t.Fatalf("m1 did not stop cleanly: %v", m1.Err)
	}
	fmt.Fprintln(os.Stderr) // keep go test's output readable after the members' logs
}
