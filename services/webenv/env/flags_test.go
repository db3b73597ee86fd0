package env

import (
	"strings"
	"testing"
)

func TestParseBrowserFlags(t *testing.T) {
	opts, err := ParseBrowserFlags([]string{"in-process-gpu", "--no-disable-gpu-vsync", "window-size=400,300"})
	if err != nil {
		t.Fatal(err)
	}
	var cfg browserConfig
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.extra) != 3 {
		t.Fatalf("got %d options, want 3", len(cfg.extra))
	}
	if _, err := ParseBrowserFlags([]string{"=x"}); err == nil || !strings.Contains(err.Error(), "invalid Chromium switch") {
		t.Fatalf("a switch without a name: err = %v", err)
	}
}
