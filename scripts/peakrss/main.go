//go:build linux

// Command peakrss runs a command and prints, on stderr, the peak resident
// set size of that process alone (VmHWM, in KiB), read at the moment it
// exits. GNU time's %M cannot say this for a program that runs children:
// wait4 returns RUSAGE_BOTH, whose ru_maxrss is the larger of the
// process's own peak and its largest reaped child's (getrusage(2)). It
// traces the process with ptrace, asking to stop at its exit
// (PTRACE_O_TRACEEXIT), where /proc/PID/status is still there; children
// are not traced, and every signal is passed on. The exit status is the
// command's.
//
// usage: peakrss COMMAND [ARG...]
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peakrss COMMAND [ARG...]")
		os.Exit(2)
	}
	path, err := lookPath(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	signal.Ignore(unix.SIGINT, unix.SIGQUIT) // the command decides
	runtime.LockOSThread()                   // ptrace requests come from the tracing thread
	proc, err := os.StartProcess(path, os.Args[1:], &os.ProcAttr{
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &unix.SysProcAttr{Ptrace: true},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(127)
	}
	pid := proc.Pid
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil { // the stop at exec
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(1)
	}
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_TRACEEXIT); err != nil {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(1)
	}
	sig := 0
	hwm := ""
	for {
		if err := unix.PtraceCont(pid, sig); err != nil {
			break
		}
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
			break
		}
		switch {
		case ws.Exited() || ws.Signaled():
			fmt.Fprintln(os.Stderr, hwm)
			if ws.Signaled() {
				os.Exit(128 + int(ws.Signal()))
			}
			os.Exit(ws.ExitStatus())
		case ws.Stopped() && ws.StopSignal() == unix.SIGTRAP && ws.TrapCause() == unix.PTRACE_EVENT_EXIT:
			hwm = vmHWM(pid)
			sig = 0
		case ws.Stopped():
			sig = int(ws.StopSignal())
			if sig == int(unix.SIGTRAP) {
				sig = 0
			}
		}
	}
	fmt.Fprintln(os.Stderr, "peakrss: lost the process")
	os.Exit(1)
}

// vmHWM is the VmHWM line's figure of /proc/PID/status, in KiB.
func vmHWM(pid int) string {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSuffix(strings.TrimSpace(v), " kB")
		}
	}
	return "?"
}

// lookPath finds a command on PATH, as a shell would.
func lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range strings.Split(os.Getenv("PATH"), ":") {
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on PATH", name)
}
