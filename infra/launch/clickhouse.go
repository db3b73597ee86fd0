package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// ClickHouse is a ClickHouse server of a program's own, started by
// infra/clickhouse.sh in a private run directory on free loopback ports:
// a drill that stops and restarts its server leaves the shared one alone.
type ClickHouse struct {
	// Addr is its native protocol address, host:port.
	Addr string
	repo string
	env  []string
}

// NewClickHouse prepares a server whose data lives in dir, on free
// loopback ports, run by repo's infra/clickhouse.sh; nothing starts until
// Up.
func NewClickHouse(dir, repo string) *ClickHouse {
	tcp, http := Port(), Port()
	return &ClickHouse{
		Addr: "127.0.0.1:" + strconv.Itoa(tcp),
		repo: repo,
		env: append(os.Environ(),
			"ASYNCWEBRL_RUN_DIR="+dir,
			"CLICKHOUSE_TCP_PORT="+strconv.Itoa(tcp),
			"CLICKHOUSE_HTTP_PORT="+strconv.Itoa(http),
		),
	}
}

// Up starts the server (again) and waits until it answers.
func (c *ClickHouse) Up() error {
	if out, err := c.script("start").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to start the private ClickHouse: %w\n%s", err, out)
	}
	return nil
}

// Down stops the server (SIGTERM, as infra/clickhouse.sh stop does).
func (c *ClickHouse) Down() error {
	if out, err := c.script("stop").CombinedOutput(); err != nil {
		return fmt.Errorf("unable to stop the private ClickHouse: %w\n%s", err, out)
	}
	return nil
}

func (c *ClickHouse) script(arg string) *exec.Cmd {
	cmd := exec.Command("bash", filepath.Join(c.repo, "infra", "clickhouse.sh"), arg)
	cmd.Env = c.env
	return cmd
}
