package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// TestForegroundGatewaySurvivors: a gateway run in the foreground puts no
// pid marker on its children. SIGKILLed, it leaves a PTY shell that
// ignores SIGHUP and a double-forked daemon, both with OPENCLAW_SHELL=exec
// and its state dir. Its gateway lock, in <state>/tmp/openclaw-<uid>/ as
// OpenClaw 2026.9 keeps it, still names the dead pid: the survivors are
// owner-dead, and the shipped example policy removes the PTY shell and
// reports the daemon as OpenClaw's.
func TestForegroundGatewaySurvivors(t *testing.T) {
	clitest.RequireRoot(t)
	clitest.BecomeSubreaper(t)
	state := t.TempDir()
	os.WriteFile(filepath.Join(state, "openclaw.json"), []byte("{}\n"), 0o600)
	mark := "fg-" + clitest.Mark
	env := []string{"OPENCLAW_SHELL=exec", "OPENCLAW_CLI=1", "OPENCLAW_STATE_DIR=" + state}
	g := startGatewayWith(t, "18789", []clitest.SpawnSpec{
		{Args: []string{"bash", "--noprofile", mark}, PTY: true, Env: env},
		{Args: []string{"node", "daemon.js", mark}, Setsid: true, Env: env},
	})
	var shell, daemon int
	for pid := range g.pids {
		switch c := clitest.CmdlineOf(pid); {
		case strings.HasPrefix(c, "bash"):
			shell = pid
		case strings.HasPrefix(c, "node daemon.js"):
			daemon = pid
		}
	}
	lockDir := filepath.Join(state, "tmp", "openclaw-"+strconv.Itoa(os.Getuid()))
	os.MkdirAll(lockDir, 0o700)
	lock, _ := json.Marshal(map[string]any{"pid": g.cmd.Process.Pid, "createdAt": time.Now().UTC().Format(time.RFC3339Nano),
		"configPath": state + "/openclaw.json", "startTime": g.pids[g.cmd.Process.Pid], "role": "gateway"})
	os.WriteFile(filepath.Join(lockDir, "gateway.1a2b3c4d.lock"), append(lock, []byte(strings.Repeat(" ", 512)+"\n")...), 0o600)
	killGateway(t, g)

	// Control: without the reaper the survivors stay.
	stillThere := func() bool { _, a := clitest.StartTicks(shell); _, b := clitest.StartTicks(daemon); return a && b }
	time.Sleep(200 * time.Millisecond)
	if !stillThere() {
		t.Fatal("control: a survivor died without the reaper")
	}
	rep, r := clitest.ReapJSON(t, "--policy", clitest.ExamplePolicy(t, regexp.QuoteMeta(mark)), "--ledger", state)
	if r.Code != 0 {
		t.Errorf("exit %d: %s", r.Code, r.Stderr)
	}
	var raw struct {
		Findings []struct {
			RootPID  int      `json:"root_pid"`
			Kind     string   `json:"kind"`
			Rule     string   `json:"rule"`
			Reasons  []string `json:"reasons"`
			Evidence []string `json:"evidence"`
			Outcome  string   `json:"outcome"`
		} `json:"findings"`
	}
	json.Unmarshal([]byte(r.Stdout), &raw)
	for _, f := range raw.Findings {
		if f.RootPID != shell && f.RootPID != daemon {
			continue
		}
		if !clitest.Contains(f.Reasons, "owner-dead") || !strings.Contains(strings.Join(f.Evidence, " "), "gateway.1a2b3c4d.lock names pid "+strconv.Itoa(g.cmd.Process.Pid)) {
			t.Errorf("pid %d: reasons %v evidence %v, want owner-dead by the lock", f.RootPID, f.Reasons, f.Evidence)
		}
	}
	if f := rep.Finding(shell); f == nil || f.Outcome != "killed" {
		t.Errorf("the PTY survivor: %+v, want killed by openclaw-pty", f)
	}
	if f := rep.Finding(daemon); f == nil || f.Outcome != "reported" {
		t.Errorf("the daemon: %+v, want reported by openclaw-other", f)
	}
	if _, ok := clitest.StartTicks(daemon); !ok {
		t.Error("the daemon was killed: the example policy only reports it")
	}
}
