//go:build linux

package clitest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"
	"golang.org/x/sys/unix"
)

// RequireRoot skips a test that needs root, saying so.
func RequireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skips.Skip(t, "needs root: run the tests as root (CI does) to exercise this")
	}
}

func WaitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	WaitForN(t, 0, cond, what)
}

// WaitForN is waitFor for a condition that waits on n processes to start
// (or change): its deadline grows with n — 100 ms each, on top of the
// 20 s of any wait — so that a test that starts a thousand processes
// holds on a machine at load average 8 on 2 cores, where one
// fork-and-exec can take tens of milliseconds.
func WaitForN(t *testing.T, n int, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20*time.Second + time.Duration(n)*100*time.Millisecond)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// LiveTree lists the live (not zombie) processes of the tree rooted at pid,
// the kernel's view: /proc/PID/task/*/children, recursively (a child is
// listed under the thread that forked it).
func LiveTree(pid int) []int {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || strings.Contains(string(b), ") Z ") {
		return nil
	}
	out := []int{pid}
	for _, child := range ChildrenOf(pid) {
		out = append(out, LiveTree(child)...)
	}
	return out
}

// DescendantsOf lists every process below pid.
func DescendantsOf(pid int) []int {
	var out []int
	for _, c := range ChildrenOf(pid) {
		out = append(out, c)
		out = append(out, DescendantsOf(c)...)
	}
	return out
}

// KillVerified sends SIGKILL to pid only if it is still the process that
// started at start: it opens a pidfd first, then re-reads the start time,
// so the check and the signal name the same process.
func KillVerified(pid int, start uint64) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone
	}
	defer unix.Close(fd)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return
	}
	var p platform.Process
	if platform.ParseStat(b, 4096, &p) != nil || p.StartTicks != start {
		return
	}
	unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// BecomeSubreaper makes the test process adopt orphans, as systemd --user
// does (PR_SET_CHILD_SUBREAPER, prctl(2)).
func BecomeSubreaper(t *testing.T) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
}

// ParentOf reads the current parent of pid from the kernel.
func ParentOf(pid int) int { return StatOf(pid).PPID }

// PgidOf reads the current process group of pid from the kernel.
func PgidOf(pid int) int { return StatOf(pid).PGID }

// StatOf is pid's /proc/PID/stat as platform parses it; its ids are -1
// when pid is gone.
func StatOf(pid int) platform.Process {
	gone := platform.Process{PPID: -1, PGID: -1}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return gone
	}
	var p platform.Process
	if platform.ParseStat(b, 4096, &p) != nil {
		return gone
	}
	return p
}

// SelfSubreaper is the [[subreaper]] entry that names this test process:
// the tests make it adopt orphans, as systemd --user does.
func SelfSubreaper(t *testing.T) string {
	t.Helper()
	self, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("[[subreaper]]\ncmdline = '^(%s|%s)( |$)'\n", regexp.QuoteMeta(os.Args[0]), regexp.QuoteMeta(self))
}

func Contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func CmdlineOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// Alive: pid is a process of this namespace that has not exited (a zombie
// has).
func Alive(pid int) bool {
	st := StateOf(pid)
	return st != "" && st != "Z" && st != "X"
}

func ChildrenOf(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			var child int
			fmt.Sscan(c, &child)
			out = append(out, child)
		}
	}
	return out
}

// KillTreeVerified SIGKILLs pid and its descendants, children first, each
// only if it is still the process the walk saw. Children are read from
// every thread's children file: a multi-threaded parent (node, a Go
// helper) forks from whichever thread it likes.
func KillTreeVerified(root int) {
	var walk func(pid int)
	walk = func(pid int) {
		for _, child := range ChildrenOf(pid) {
			walk(child)
		}
		if start, ok := StartTicks(pid); ok {
			KillVerified(pid, start)
		}
	}
	walk(root)
}

func StartTicks(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var v uint64
	_, err = fmt.Sscan(f[19], &v)
	return v, err == nil
}

func MustReadFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// StateOf is the state letter of pid (R, S, T, Z …), "" when it is gone.
func StateOf(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	return f[0]
}

// CommOf is pid's comm.
func CommOf(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

func HasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Without is the pids of a that b does not hold.
func Without(a, b []int) []int {
	var out []int
	for _, pid := range a {
		if !slices.Contains(b, pid) {
			out = append(out, pid)
		}
	}
	return out
}

func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// GrepLines keeps the lines of s that hold sub.
func GrepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// UnderLoad is d on an idle machine, and d again for each multiple of the
// cores the load average is now: a deadline that holds at load 8 on 2
// cores (5×d) while other work runs.
func UnderLoad(d time.Duration) time.Duration {
	load := 0.0
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			load, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return time.Duration((1 + load/float64(runtime.NumCPU())) * float64(d))
}
