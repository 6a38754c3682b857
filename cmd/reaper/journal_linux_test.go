package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

const envJournal = "REAPER_TEST_JOURNAL"

// TestJournald: reaper sends structured records to journald. The test gives
// it a journald of its own: in a private mount namespace, a tmpfs over /run
// with a datagram socket at /run/systemd/journal/socket, where go-systemd
// sends (the native protocol, systemd-journald.service(8)).
func TestJournald(t *testing.T) {
	clitest.RequireRoot(t)
	dir, err := os.MkdirTemp("", "reaper-journal-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Subreaper state is process-wide and sticky: make it explicit, so the
	// orphan's new parent is this test, which the policy names.
	clitest.BecomeSubreaper(t)
	orphan := adoptNowhere(t, "npm exec mcp-remote https://journal.test")
	pol := filepath.Join(dir, "policy.toml")
	os.WriteFile(pol, []byte(clitest.MustReadFile(t, reapPolicy(t, `
[[rule]]
name = "journal-test"
when = ["reparented"]
cmdline = 'journal\.test'
action = "terminate"
`))), 0o644)
	self, _ := os.Executable()
	cmd := execHelper(self, envJournal+"="+dir, envReaperBin+"="+clitest.Bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("journal helper: %v\n%s", err, out)
	}
	var records []map[string]string
	if err := json.Unmarshal(lastLine(out), &records); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var decision, signal map[string]string
	for _, r := range records {
		switch r["MESSAGE_ID"] {
		case "8f3a1c9d5b2e4f6a8c0d1e2f3a4b5c6d":
			if r["REAPER_PID"] == fmt.Sprint(orphan) {
				decision = r
			}
		case "2b7e9c4a1d3f4e5b9a8c7d6e5f4a3b2c":
			if r["REAPER_PID"] == fmt.Sprint(orphan) && r["REAPER_SIGNAL"] == "SIGTERM" {
				signal = r
			}
		}
	}
	if decision == nil || decision["REAPER_OUTCOME"] != "killed" || decision["REAPER_RULE"] != "journal-test" ||
		decision["REAPER_ACTION"] != "terminate" || !strings.Contains(decision["REAPER_REASONS"], "reparented") ||
		decision["REAPER_START"] == "" || decision["MESSAGE"] == "" {
		t.Errorf("decision record %v", decision)
	}
	if signal == nil || signal["REAPER_RESULT"] != "ok" || signal["REAPER_START"] == "" {
		t.Errorf("signal record %v", signal)
	}
}

// adoptNowhere starts a bash tree whose parent exits, so it is reparented
// (to this test, when it is a subreaper), and returns its pid.
func adoptNowhere(t *testing.T, argv0 string) int {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pid")
	outer := exec.Command("bash", "-c", fmt.Sprintf(`(exec -a %q bash -c "sleep 60; exit 0") </dev/null >/dev/null 2>&1 & echo $! > %q`, argv0, pidfile))
	if out, err := outer.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	b, _ := os.ReadFile(pidfile)
	var pid int
	fmt.Sscan(string(b), &pid)
	t.Cleanup(func() { clitest.KillTreeVerified(pid) })
	// Wait until the exec has happened and the parent is gone.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.HasPrefix(clitest.CmdlineOf(pid), argv0) || clitest.ParentOf(pid) == 0 || clitest.ParentOf(pid) == outer.Process.Pid {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: %q, parent %d", pid, clitest.CmdlineOf(pid), clitest.ParentOf(pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return pid
}

// runJournalHelper runs in a private mount namespace: it hides /run behind
// a tmpfs, listens where journald would, runs `reaper reap --journal on`
// and prints the records it got as one JSON line.
func runJournalHelper(dir string) {
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		os.Exit(2)
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		fail("private: %v", err)
	}
	if err := syscall.Mount("tmpfs", "/run", "tmpfs", 0, "mode=755"); err != nil {
		fail("tmpfs: %v", err)
	}
	os.MkdirAll("/run/systemd/journal", 0o755)
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: "/run/systemd/journal/socket", Net: "unixgram"})
	if err != nil {
		fail("listen: %v", err)
	}
	var records []map[string]string
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				close(done)
				return
			}
			records = append(records, parseJournal(buf[:n]))
		}
	}()
	c := exec.Command(os.Getenv(envReaperBin), "reap", "--journal", "on", "--policy", filepath.Join(dir, "policy.toml"),
		"--lock-file", filepath.Join(dir, "lock"), "-o", "json")
	if out, err := c.CombinedOutput(); err != nil {
		fail("reap: %v\n%s", err, out)
	}
	time.Sleep(100 * time.Millisecond)
	conn.Close()
	<-done
	b, _ := json.Marshal(records)
	fmt.Println(string(b))
	os.Exit(0)
}

// parseJournal reads one native-protocol datagram: KEY=value lines, or KEY
// newline, a little-endian 64-bit length and the raw value for values that
// hold newlines.
func parseJournal(b []byte) map[string]string {
	rec := map[string]string{}
	r := bufio.NewReader(bytes.NewReader(b))
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return rec
		}
		line = strings.TrimSuffix(line, "\n")
		if k, v, ok := strings.Cut(line, "="); ok {
			rec[k] = v
			continue
		}
		var n uint64
		if binary.Read(r, binary.LittleEndian, &n) != nil {
			return rec
		}
		v := make([]byte, n)
		r.Read(v)
		r.ReadByte() // the trailing newline
		rec[line] = string(v)
	}
}
