package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const auditUsage = `Usage: asyncwebrl audit [flags]
  Compares every topic the recorder records (under -topic-prefix) with its
  ClickHouse table: the events each topic holds committed, how many of them
  ClickHouse has, and the events of aborted transactions that reached it
  (there must be none). Undecodable records are looked up in bad_records.
  Run it once the recorder has caught up (after a clean stop, for example).
  Exit 1 when a committed event is missing or an aborted one was recorded.
Flags: -topic-prefix, -brokers, the Kafka security flags, -clickhouse-addr,
-clickhouse-database, -clickhouse-user, ASYNCWEBRL_CLICKHOUSE_PASSWORD.
`

func runAudit(ctx context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 && (args[0] == "-help" || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
		fmt.Fprint(stdout, auditUsage)
		return nil
	}
	cfg, err := cmdkit.Parse(args, stdout)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	f := kafka.NewFactory(cfg, cfg.Brokers, nil)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	ch := cmdkit.ClickHouse(cfg)
	conn, err := analytics.Open(ctx, ch)
	if err != nil {
		if analytics.IsUnknownDatabase(err) {
			return fmt.Errorf("database %s does not exist on %s: nothing was recorded there (pass -clickhouse-database)", ch.Database, ch.Addr)
		}
		return err
	}
	defer conn.Close()
	cat := topics.New(topics.WithPrefix(cfg.TopicPrefix))
	audit, err := loadtest.AuditRecorder(ctx, func(opts ...kgo.Opt) (*kgo.Client, error) {
		return f.NewClient("audit", opts...)
	}, cat, conn, ch.Database)
	if err != nil {
		return fmt.Errorf("unable to audit the recorder: %w", err)
	}
	fmt.Fprintf(stdout, "topics %s* against ClickHouse %s\n%s", cfg.TopicPrefix, ch.Database, audit)
	if !audit.OK() {
		for _, t := range audit {
			if len(t.Missing) > 0 {
				fmt.Fprintf(stdout, "%s: missing from %s, for example: %v\n", t.Topic, t.Table, t.Missing)
			}
		}
		return errors.New("ClickHouse does not hold exactly the committed events of the topics")
	}
	fmt.Fprintln(stdout, "ok: every committed event is in ClickHouse, no aborted one is")
	return nil
}
