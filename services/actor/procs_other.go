//go:build !linux

package actor

import (
	"os/exec"
	"time"
)

// On other platforms the browser keeps chromedp's defaults and nothing is
// swept: the actor's process guarantees are Linux's.

func ownProcessGroup(*exec.Cmd)     {}
func killGroup(int)                 {}
func setGroupNice(int, int)         {}
func processesOf(int, string) []int { return nil }
func killRest(int, string)          {}
func cpuTimeOf([]int) time.Duration { return 0 }
func selfCPU() time.Duration        { return 0 }
