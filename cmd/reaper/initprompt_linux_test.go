package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// Issue 52, item 4: `reaper init`'s prompt was a read that never saw the
// context main cancels — only an answer or Ctrl-D ended it, and a
// harness's SIGTERM left it waiting ten minutes. On a real terminal,
// Ctrl-C at the prompt (the line discipline's SIGINT) is a "no": nothing
// changes and it exits 130; SIGTERM ends it with 143. The control: "n"
// answers no and exits 0.
func TestInitPromptInterrupted(t *testing.T) {
	for _, tt := range []struct {
		name string
		send func(master *os.File, pid int)
		want int
	}{
		{"Ctrl-C", func(m *os.File, _ int) { m.Write([]byte{3}) }, 130},
		{"SIGTERM", func(_ *os.File, pid int) { syscall.Kill(pid, syscall.SIGTERM) }, 143},
		{"control: n", func(m *os.File, _ int) { m.Write([]byte("n\r")) }, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
			settings := filepath.Join(home, ".claude", "settings.json")
			os.WriteFile(settings, []byte("{}\n"), 0o600)
			policyBefore := policyState()
			master, slave, err := clitest.OpenPTY()
			if err != nil {
				t.Skipf("no pseudo-terminal here: %v", err)
			}
			defer master.Close()
			cmd := exec.Command(clitest.Bin, "init", "--no-service")
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
				"XDG_STATE_HOME="+filepath.Join(home, ".state"), "CLAUDE_CONFIG_DIR=", "TERM=xterm-256color", "COLORTERM=truecolor")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			slave.Close()
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			screen := &lockedScreen{drained: make(chan struct{})}
			go screen.copyFrom(master)
			clitest.WaitFor(t, func() bool { return strings.Contains(screen.String(), "Proceed? [y/N]") }, "the prompt")
			tt.send(master, cmd.Process.Pid)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var werr error
			select {
			case werr = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("still waiting at its prompt 30 s after %s\n%s", tt.name, screen)
			}
			select { // its last words may still be in the terminal: read them all
			case <-screen.drained:
			case <-time.After(10 * time.Second):
			}
			code := 0
			var ee *exec.ExitError
			if errors.As(werr, &ee) {
				code = ee.ExitCode()
			}
			if code != tt.want || !strings.Contains(screen.String(), "Nothing changed.") {
				t.Errorf("exit %d, want %d, saying nothing changed\n%s", code, tt.want, screen)
			}
			if b, _ := os.ReadFile(settings); string(b) != "{}\n" {
				t.Errorf("the settings changed: %q", b)
			}
			if policyState() != policyBefore {
				t.Error("a policy was written")
			}
		})
	}
}

// policyState says whether init's policy file is there, as this user's
// init would write it (the root one, /etc/reaper/policy.toml, as root).
func policyState() bool {
	if os.Geteuid() != 0 {
		return false // in the test's own home, checked by the settings
	}
	_, err := os.Stat("/etc/reaper/policy.toml")
	return err == nil
}

// lockedScreen is what a pseudo-terminal's master has read.
type lockedScreen struct {
	mu sync.Mutex
	b  bytes.Buffer
	// drained is closed when the terminal reads nothing more (no one
	// holds its slave); nil until copyFrom starts.
	drained chan struct{}
}

// copyFrom keeps what f reads, to its end.
func (s *lockedScreen) copyFrom(f *os.File) {
	defer close(s.drained)
	buf := make([]byte, 4096)
	for {
		n, err := f.Read(buf)
		s.mu.Lock()
		s.b.Write(buf[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *lockedScreen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
