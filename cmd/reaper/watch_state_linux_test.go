package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// A session that starts after the watch's last pass is watched from the
// moment its client writes its session file: the new entry in the
// watched sessions dir is a hint, the pass it triggers reads the user's
// state again and names the session's owner, and the owner's SIGKILL is
// then a hint too — its orphan is reaped long before the backstop (10
// minutes). The control: with no sessions dir to watch when the watch
// started (the file comes with the dir), the same owner's death goes
// unseen and its orphan lives on. The owner is titled like no client, so
// only its session file can name it.
func TestWatchNewSessionFile(t *testing.T) {
	if isolated(t) {
		return
	}
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-session-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"owner-dead"`, "min_age = \"0s\"")
	for _, tt := range []struct {
		name    string
		watched bool // the sessions dir exists when the watch starts
	}{{"control: no sessions dir to watch", false}, {"sessions dir watched", true}} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
			if tt.watched {
				os.MkdirAll(filepath.Join(home, ".claude", "sessions"), 0o700)
			}
			prom := filepath.Join(t.TempDir(), "reaper.prom")
			w := clitest.StartWatchEnv(t, []string{"HOME=" + home}, pol, "--backstop", "10m", "--metrics", prom)

			session := fmt.Sprintf("s-%s-%d", clitest.Mark, time.Now().UnixNano())
			owner := adopt(t, "session-owner-"+mark, fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait`, session, "npm exec mcp-remote https://"+mark), nil)
			child := childWith(t, owner, mark, "the session's child")
			t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
			writeSession(t, home, owner, session)
			if tt.watched {
				clitest.WaitFor(t, func() bool {
					// One pass or more: the file's temporary name and its
					// rename may come as two hints.
					text, _ := os.ReadFile(prom)
					return strings.Contains(string(text), `reaper_watch_passes_total{trigger="hint"} `)
				}, "the pass the session file triggers")
			} else {
				time.Sleep(2 * time.Second) // what the hint pass takes, were there one
			}
			killed := time.Now()
			syscall.Kill(owner, syscall.SIGKILL)
			if !tt.watched {
				time.Sleep(3 * time.Second)
				if !clitest.Alive(child) {
					t.Fatalf("control: the orphan %d was reaped with no sessions dir watched:\n%s", child, w.Stdout)
				}
				return
			}
			clitest.WaitFor(t, func() bool { return !clitest.Alive(child) }, "the orphan of the session's owner reaped")
			t.Logf("session file → watched; owner SIGKILL → its orphan gone in %s (backstop 10m)", time.Since(killed).Round(time.Millisecond))
		})
	}
}

// writeSession writes a Claude Code session file for a live pid in home,
// atomically as Claude Code does (a temporary file renamed in).
func writeSession(t *testing.T, home string, pid int, session string) {
	t.Helper()
	dir := filepath.Join(home, ".claude", "sessions")
	os.MkdirAll(dir, 0o700)
	b, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": session, "cwd": "/w", "startedAt": time.Now().Add(-90 * time.Second).UnixMilli(),
		"procStart": fmt.Sprint(clitest.StatOf(pid).StartTicks), "kind": "interactive", "version": "2.1.331"})
	tmp := filepath.Join(home, ".claude", "session.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("%d.json", pid))); err != nil {
		t.Fatal(err)
	}
}

// A client that starts at a pid a dead one had writes its session file
// over that one's, in place: no entry is made, yet the watch, which reads
// a dir by the entries its events name, must read it again — the write's
// close is the event. The session file the watch's first pass read is a
// dead claude's at the owner's pid (another start); rewritten in place
// as the owner's, it names the owner, whose SIGKILL then has its orphan
// reaped. The control: not rewritten, nothing names the owner, and its
// orphan lives on.
func TestWatchSessionFileRewritten(t *testing.T) {
	if isolated(t) {
		return
	}
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	mark := "watch-rewrite-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"owner-dead"`, "min_age = \"0s\"")
	for _, rewritten := range []bool{false, true} {
		t.Run(fmt.Sprintf("rewritten=%v", rewritten), func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, ".claude", "sessions")
			os.MkdirAll(dir, 0o700)
			session := fmt.Sprintf("s-%s-%d", clitest.Mark, time.Now().UnixNano())
			owner := adopt(t, "session-owner-"+mark, fmt.Sprintf(`export CLAUDE_CODE_SESSION_ID=%s; (exec -a %q sleep 600) & wait`, session, "npm exec mcp-remote https://"+mark), nil)
			child := childWith(t, owner, mark, "the session's child")
			t.Cleanup(func() { syscall.Kill(child, syscall.SIGKILL) })
			file := filepath.Join(dir, fmt.Sprintf("%d.json", owner))
			write := func(id string, start uint64) {
				b, _ := json.Marshal(map[string]any{"pid": owner, "sessionId": id, "cwd": "/w", "startedAt": time.Now().Add(-90 * time.Second).UnixMilli(),
					"procStart": fmt.Sprint(start), "kind": "interactive", "version": "2.1.331"})
				if err := os.WriteFile(file, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("dead-"+session, clitest.StatOf(owner).StartTicks-100) // a dead claude's, at the same pid
			prom := filepath.Join(t.TempDir(), "reaper.prom")
			w := clitest.StartWatchEnv(t, []string{"HOME=" + home}, pol, "--backstop", "10m", "--metrics", prom)
			passes := func(trigger string) bool {
				text, _ := os.ReadFile(prom)
				return strings.Contains(string(text), `reaper_watch_passes_total{trigger="`+trigger+`"} `)
			}
			clitest.WaitFor(t, func() bool { return passes("start") }, "the watch's first pass")
			if rewritten {
				write(session, clitest.StatOf(owner).StartTicks) // in place: the file exists
				clitest.WaitFor(t, func() bool { return passes("hint") }, "the pass the rewrite triggers")
			} else {
				time.Sleep(2 * time.Second) // what the hint pass takes, were there one
			}
			killed := time.Now()
			syscall.Kill(owner, syscall.SIGKILL)
			if !rewritten {
				time.Sleep(3 * time.Second)
				if !clitest.Alive(child) {
					t.Fatalf("control: the orphan %d was reaped with its owner named by nothing:\n%s", child, w.Stdout)
				}
				return
			}
			clitest.WaitFor(t, func() bool { return !clitest.Alive(child) }, "the orphan of the rewritten session's owner reaped")
			t.Logf("session file rewritten in place → read; owner SIGKILL → its orphan gone in %s (backstop 10m)", time.Since(killed).Round(time.Millisecond))
		})
	}
}
