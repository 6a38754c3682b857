package statedir

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// Issue 51, attack 3: B's claude sessions crash, leaving more stale
// records than the bound; A then holds processes at the pids those
// records name. A process at a recorded pid is the record's writer only
// when it is the record's user's (or root's) and started before the
// record was written: A's processes read as gone — here even though they
// started before the records, so the uid alone decides — and B's newest
// record, the one that proves this pass's leftovers owner-dead, is read,
// with no "live" record left past the bound as B's doubt. The control:
// the same pids held by processes of the records' own user are live,
// read first, and what they push past the bound is doubt.
func TestChooseTakesNoBorrowedPid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the borrowed pids are another user's processes")
	}
	const max = 8
	for _, who := range []string{"another user's", "the records' user's"} {
		dir := t.TempDir()
		var borrowed []int
		for range max + 4 {
			c := exec.Command("sleep", "300")
			if who == "another user's" {
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Process.Kill(); c.Wait() })
			borrowed = append(borrowed, c.Process.Pid)
		}
		// Records written after those processes started, by root (the
		// records' user): older ones at the borrowed pids, and the newest
		// at a pid no process has.
		now := time.Now()
		write := func(pid int, at time.Time) string {
			name := fmt.Sprintf("%d.json", pid)
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(path, at, at)
			return name
		}
		for k, pid := range borrowed {
			write(pid, now.Add(time.Duration(k)*time.Millisecond))
		}
		newest := write(1<<22+1, now.Add(time.Second)) // above pid_max: gone
		pidOf := func(name string) int { n, _ := strconv.Atoi(strings.TrimSuffix(name, ".json")); return n }
		c, err := Choose(dir, func(n string) bool { return strings.HasSuffix(n, ".json") }, pidOf, max)
		if err != nil {
			t.Fatal(err)
		}
		read := false
		for _, n := range c.Names {
			read = read || n == newest
		}
		switch who {
		case "another user's":
			if !read || c.LiveLeft != 0 || c.Doubt("session files", max) != "" {
				t.Errorf("%s pids: newest read %v, %d left as live (%q); want the newest read and no doubt", who, read, c.LiveLeft, c.Doubt("session files", max))
			}
		default:
			if read || c.LiveLeft != len(borrowed)-max {
				t.Errorf("control, %s pids: newest read %v, %d left as live; want the live writers first and %d left as doubt", who, read, c.LiveLeft, len(borrowed)-max)
			}
		}
	}
}

// A process is its record's writer only while it lives, is the record's
// user's or root's, and started before the record was written.
func TestRecordOwnerLive(t *testing.T) {
	c := exec.Command("sleep", "300")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	me := uint32(os.Getuid())
	if !platform.RecordOwnerLive(c.Process.Pid, me, time.Now()) {
		t.Error("control: its own process, started before the record: not live")
	}
	if platform.RecordOwnerLive(c.Process.Pid, me, time.Now().Add(-time.Hour)) {
		t.Error("a process started an hour after the record was written: live")
	}
	if me != 0 && platform.RecordOwnerLive(c.Process.Pid, me+1, time.Now()) {
		t.Error("another user's process: live")
	}
	if platform.RecordOwnerLive(1<<22+1, me, time.Now()) {
		t.Error("no process: live")
	}
}

// BenchmarkChoose is one pass's choice in a records dir of 2,000 stale
// files of dead pids and 50 of live ones, bound 256 (the soak of issue
// 55: a Claude Code sessions dir that kept every killed session's file).
func BenchmarkChoose(b *testing.B) {
	dir := b.TempDir()
	now := time.Now()
	for k := range 2000 {
		path := filepath.Join(dir, fmt.Sprintf("%d.json", 1<<22+k))
		os.WriteFile(path, []byte("{}"), 0o600)
		os.Chtimes(path, now.Add(-time.Duration(k)*time.Second), now.Add(-time.Duration(k)*time.Second))
	}
	for range 50 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", os.Getpid())), []byte("{}"), 0o600)
	}
	pidOf := func(name string) int { n, _ := strconv.Atoi(strings.TrimSuffix(name, ".json")); return n }
	match := func(n string) bool { return strings.HasSuffix(n, ".json") }
	b.ResetTimer()
	for range b.N {
		if _, err := Choose(dir, match, pidOf, 256); err != nil {
			b.Fatal(err)
		}
	}
}
