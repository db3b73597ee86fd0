package analytics

import (
	"bytes"
	goflag "flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateDashboard = goflag.Bool("update-dashboard", false, "rewrite infra/compose/grafana/dashboards/asyncwebrl.json")

// dashboardPath is the provisioned dashboard, generated from the saved
// queries.
var dashboardPath = filepath.Join("..", "infra", "compose", "grafana", "dashboards", "asyncwebrl.json")

// The committed dashboard is what GrafanaDashboard makes of today's saved
// queries: a query changed without the dashboard fails here (go test
// ./analytics -run TestGrafanaDashboardIsGenerated -update-dashboard
// rewrites it).
func TestGrafanaDashboardIsGenerated(t *testing.T) {
	want, err := GrafanaDashboard()
	if err != nil {
		t.Fatal(err)
	}
	if *updateDashboard {
		if err := os.WriteFile(dashboardPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the saved queries make; run go test ./analytics -run TestGrafanaDashboardIsGenerated -update-dashboard", dashboardPath)
	}
	for _, p := range grafanaPanels {
		q, _ := LookupQuery(p.query)
		sql := GrafanaSQL(q, p.columns)
		if strings.Contains(sql, "@") || strings.Contains(sql, "--") {
			t.Errorf("%s: a parameter or comment is left:\n%s", p.query, sql)
		}
	}
}
