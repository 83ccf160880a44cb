package plugins

import (
	"strconv"
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) process pid has used, 0
// for this process; 0 where it cannot be read (outside Linux).
func cpuTime(pid int) time.Duration {
	if pid == 0 {
		var ru syscall.Rusage
		if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	// utime and stime, in clock ticks (100 a second on Linux).
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
