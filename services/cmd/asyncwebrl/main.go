// Command asyncwebrl is the single binary of AsyncWebRL: every component is a
// target of it (-target=all runs the whole stack in one process).
package main

import (
	"context"
	"os"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
