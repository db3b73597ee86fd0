//go:build !linux

package cpuset

import "errors"

// Supported reports whether pinning works on this OS.
const Supported = false

var errUnsupported = errors.New("unable to pin threads: supported on Linux only")

// Reserve is Linux's only.
func Reserve(core int) error { return errUnsupported }

// Own is Linux's only.
func Own(core int) error { return errUnsupported }

// Of is Linux's only.
func Of() ([]int, error) { return nil, errUnsupported }
