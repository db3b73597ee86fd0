package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// errDrift is returned by `topics check` when the cluster differs.
type errDrift struct{ n int }

func (e errDrift) Error() string { return fmt.Sprintf("%d topic drift(s) from the catalog", e.n) }

func runTopics(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, `Usage: asyncwebrl topics apply|check|list [flags]
  apply   create missing topics, add partitions, set configs (idempotent)
  check   report drift from the catalog; exit 1 on drift
  list    print the catalog
Flags: -brokers, -topic-prefix, -topic-partitions, -topic-replication and the Kafka security flags (see asyncwebrl -help).
`)
		return nil
	}
	verb := args[0]
	cfg, err := cmdkit.Parse(args[1:], stdout)
	if err != nil {
		return err
	}
	cat := cmdkit.Catalog(cfg, cfg.TopicPrefix)
	if verb == "list" {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tRF\tCLEANUP\tRETENTION\tMAX BYTES\tKEY\tHOLDS")
		for _, s := range cat.Specs {
			ret := "forever"
			if s.Retention > 0 {
				ret = s.Retention.String()
			}
			// list reads no cluster: a replication that follows it says so.
			rf := "auto"
			if s.Replication != topics.AutoReplication {
				rf = strconv.Itoa(int(s.Replication))
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t%s\t%s\n", cat.Name(s.Name), s.Partitions, rf, s.Cleanup, ret, s.MaxMessageBytes, s.Key, s.Doc)
		}
		return tw.Flush()
	}
	if verb != "apply" && verb != "check" {
		return cmdkit.Usage(fmt.Errorf("unknown topics command %q (want apply, check or list)", verb))
	}
	if cfg.Embedded() {
		return cmdkit.Usage(fmt.Errorf("topics %s needs a real broker: -brokers=embedded exists only inside a running process", verb))
	}
	f := kafka.NewFactory(cfg, cfg.Brokers, nil)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	cl, err := f.NewClient("topics")
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if verb == "apply" {
		changes, err := topics.Apply(ctx, cl, cat)
		if err != nil {
			return err
		}
		for _, c := range changes {
			fmt.Fprintln(stdout, c)
		}
		fmt.Fprintf(stdout, "%d change(s); %d topics in the catalog\n", len(changes), len(cat.Specs))
		return nil
	}
	drifts, err := topics.Check(ctx, cl, cat)
	if err != nil {
		return err
	}
	for _, d := range drifts {
		fmt.Fprintln(stdout, "drift:", d)
	}
	if len(drifts) > 0 {
		return errDrift{len(drifts)}
	}
	fmt.Fprintf(stdout, "no drift; %d topics match the catalog\n", len(cat.Specs))
	return nil
}
