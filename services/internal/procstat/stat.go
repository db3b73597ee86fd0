package procstat

import (
	"os"
	"strconv"
	"strings"
)

// The fields of Stat, counted from the state (stat's third field).
const (
	State = 0
	PPID  = 1
	PGRP  = 2
	UTime = 11
	STime = 12
)

// Stat returns the fields of /proc/<pid>/stat after the command name, or
// nil when the process is gone or the line is short. The command name
// (the second field) may hold spaces and parentheses, so the fields start
// after its last ')'.
func Stat(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	f := strings.Fields(s[i+1:])
	if len(f) <= STime {
		return nil
	}
	return f
}

// Int returns field i of f as an int, 0 when it is missing or not a number.
func Int(f []string, i int) int {
	if i >= len(f) {
		return 0
	}
	n, _ := strconv.Atoi(f[i])
	return n
}
