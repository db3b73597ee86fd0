package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
)

// newWebenv builds the webenv target.
// TODO(webenv): wired when services/webenv lands.
func newWebenv(d deps) (app.Service, error) {
	return pendingTarget("webenv", 3)(d)
}

func runWebenv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return usageError{fmt.Errorf("webenv commands arrive with the webenv target")}
}
