//go:build linux

// Command statfloor is the floor scripts/bench-scan.sh measures reaper
// scan against: the least a process-table reader can do on Linux. It lists
// /proc once and reads every /proc/PID/stat with one openat relative to the
// open /proc fd, one read and one close, on one thread, and prints how many
// it read. Nothing is parsed or kept.
package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func main() {
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
	var buf [4096]byte
	read := 0
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		f, err := unix.Openat(fd, name+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // exited since the listing
		}
		if n, err := unix.Read(f, buf[:]); err == nil && n > 0 {
			read++
		}
		unix.Close(f)
	}
	fmt.Println(read)
}
