package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
)

const healthUsage = `Usage: asyncwebrl health [--url URL] [--timeout D]
  Asks a running asyncwebrl's admin server how it is (GET /healthz) and exits
  0 when it answers 200 (ok, or degraded: riding out an outage), 1 otherwise,
  printing the answer. It is the container healthcheck of compose.yaml and
  the Kubernetes probes: the image needs no curl.
  --url URL      the health endpoint (default http://127.0.0.1:7070/healthz, the
                 default -admin-addr)
  --timeout D    how long to wait for the answer (default 3s)
`

func runHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, healthUsage)
		return nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"url", "timeout"}, nil)
	if err != nil {
		return cmdkit.Usage(err)
	}
	if len(rest) > 0 {
		return cmdkit.Usage(fmt.Errorf("unexpected arguments %q", rest))
	}
	url, timeout := "http://127.0.0.1:7070/healthz", 3*time.Second
	if v, ok := vals["url"]; ok {
		url = v
	}
	if v, ok := vals["timeout"]; ok {
		if timeout, err = time.ParseDuration(v); err != nil || timeout <= 0 {
			return cmdkit.Usage(fmt.Errorf("invalid --timeout %q: want a positive duration like 3s", v))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return cmdkit.Usage(fmt.Errorf("invalid --url %q: %w", url, err))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("unable to reach %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	answer := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s: %s", url, resp.Status, answer)
	}
	fmt.Fprintln(stdout, answer)
	return nil
}
