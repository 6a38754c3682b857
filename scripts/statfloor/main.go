//go:build linux

// Command statfloor is the floor scripts/bench-scan.sh measures reaper
// scan against: the least a process-table reader can do on Linux. It lists
// /proc once and reads every /proc/PID/stat with one openat relative to the
// open /proc fd, one read and one close, and prints how many it read.
// Nothing is parsed or kept. It reads on as many goroutines as reaper's
// stat pass does (platform's statWorkers: the cores, at most 4), over
// disjoint parts of the listing, so that the floor uses the machine's
// cores as reaper does; -w 1 is the one-thread floor of earlier figures.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

func main() {
	workers := flag.Int("w", min(runtime.GOMAXPROCS(0), 4), "goroutines reading the stat files")
	flag.Parse()
	dir, err := os.Open("/proc")
	if err != nil {
		fmt.Fprintln(os.Stderr, "statfloor:", err)
		os.Exit(1)
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		fmt.Fprintln(os.Stderr, "statfloor:", err)
		os.Exit(1)
	}
	fd := int(dir.Fd())
	var read atomic.Int64
	var wg sync.WaitGroup
	n := max(*workers, 1)
	chunk := (len(names) + n - 1) / n
	for w := 0; w < n; w++ {
		part := names[min(w*chunk, len(names)):min((w+1)*chunk, len(names))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf [4096]byte
			for _, name := range part {
				if name[0] < '0' || name[0] > '9' {
					continue
				}
				f, err := unix.Openat(fd, name+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
				if err != nil {
					continue // exited since the listing
				}
				if n, err := unix.Read(f, buf[:]); err == nil && n > 0 {
					read.Add(1)
				}
				unix.Close(f)
			}
		}()
	}
	wg.Wait()
	fmt.Println(read.Load())
}
