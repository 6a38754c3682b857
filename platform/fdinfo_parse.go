package platform

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// ParseFdinfoTTYIndex returns the tty-index line of /proc/PID/fdinfo/FD:
// for a pseudo-terminal master (/dev/ptmx) it is N of the /dev/pts/N slave
// it controls (proc_fdinfo(5)). ok is false when the file has none.
func ParseFdinfoTTYIndex(b []byte) (n int, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, value, found := strings.Cut(sc.Text(), ":")
		if !found || key != "tty-index" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(value))
		if err != nil || n < 0 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// ParseFdinfoFlags returns the flags line of /proc/PID/fdinfo/FD: the
// file's open flags, in octal (proc_fdinfo(5)). ok is false when the file
// has none that parses.
func ParseFdinfoFlags(b []byte) (flags int, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, value, found := strings.Cut(sc.Text(), ":")
		if !found || key != "flags" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(value), 8, 32)
		if err != nil {
			return 0, false
		}
		return int(n), true
	}
	return 0, false
}

// IOCounters are a process's I/O counters from /proc/PID/io (proc_pid_io(5)).
type IOCounters struct {
	RChar, WChar        uint64 // bytes read and written through syscalls, terminals included
	SyscR, SyscW        uint64 // read and write syscalls
	ReadBytes           uint64 // bytes fetched from storage
	WriteBytes          uint64 // bytes sent to storage
	CancelledWriteBytes uint64
}

// ParseIO parses /proc/PID/io. Unknown lines are ignored; a known line
// whose value does not parse is an error.
func ParseIO(b []byte) (IOCounters, error) {
	var c IOCounters
	fields := map[string]*uint64{
		"rchar": &c.RChar, "wchar": &c.WChar, "syscr": &c.SyscR, "syscw": &c.SyscW,
		"read_bytes": &c.ReadBytes, "write_bytes": &c.WriteBytes, "cancelled_write_bytes": &c.CancelledWriteBytes,
	}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, value, found := strings.Cut(sc.Text(), ":")
		dst, known := fields[key]
		if !found || !known {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
		if err != nil {
			return IOCounters{}, fmt.Errorf("io: %s %q: %w", key, value, ErrMalformed)
		}
		*dst = v
		seen++
	}
	if seen == 0 {
		return IOCounters{}, fmt.Errorf("io: no counters: %w", ErrMalformed)
	}
	return c, nil
}
