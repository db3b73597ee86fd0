package procstat

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// Ticks is the machine's CPU time in clock ticks, summed over its cores,
// from the first ("cpu") line of /proc/stat.
type Ticks struct {
	Busy, Total uint64
}

// Machine reads the machine's CPU ticks; the zero Ticks when /proc/stat
// cannot be read (off Linux). Why beside the per-process times: a benchmark
// that counts only its own processes leaves out the broker and every other
// process it shares the cores with, so it cannot tell whether the machine
// itself is saturated.
func Machine() Ticks {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return Ticks{}
	}
	defer f.Close()
	return parseMachine(f)
}

// parseMachine reads the "cpu" line: user nice system idle iowait irq
// softirq steal guest guest_nice. Idle and iowait are the idle time; guest
// and guest_nice are already counted in user and nice, so they are left out
// of the total.
func parseMachine(r io.Reader) Ticks {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var t Ticks
		for i, s := range f[1:min(len(f), 9)] { // through steal
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return Ticks{}
			}
			t.Total += n
			if i != 3 && i != 4 { // idle, iowait
				t.Busy += n
			}
		}
		return t
	}
	return Ticks{}
}

// Util is the busy share of the machine's CPU between a and b, in [0, 1];
// 0 when nothing was measured.
func Util(a, b Ticks) float64 {
	if b.Total <= a.Total || b.Busy < a.Busy {
		return 0
	}
	return float64(b.Busy-a.Busy) / float64(b.Total-a.Total)
}
