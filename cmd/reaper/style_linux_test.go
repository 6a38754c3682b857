package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// onPTY runs reaper with stdout on a pseudo-terminal, as a person at one
// runs it, in exactly env, and returns what the terminal got.
func onPTY(t *testing.T, env []string, args ...string) string {
	t.Helper()
	master, slave, err := clitest.OpenPTY()
	if err != nil {
		t.Fatalf("pty: %v", err)
	}
	defer master.Close()
	cmd := exec.Command(clitest.Bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = slave, &stderr
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(master) // EIO once the slave's last holder closes it
		got <- string(b)
	}()
	runErr := cmd.Run()
	slave.Close()
	out := <-got
	if runErr != nil {
		t.Fatalf("reaper %v: %v\n%s", args, runErr, stderr.String())
	}
	return out
}

// --color=auto colours a terminal that wants it, and nothing else: not a
// pipe (the timer's journal, a script), not NO_COLOR's, not a dumb one;
// --color=always and never overrule the rest, NO_COLOR too.
func TestColorOnTerminal(t *testing.T) {
	history := []string{"history", "--audit-log", "../../testdata/audit/audit.jsonl", "--since", "2026-01-01"}
	base := []string{"TZ=UTC", "LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin"}
	const painted = "\x1b[32mkilled\x1b[0m"
	for _, tt := range []struct {
		name  string
		env   []string
		flags []string
		color bool
	}{
		{"a terminal", []string{"TERM=xterm-256color"}, nil, true},
		{"NO_COLOR set", []string{"TERM=xterm-256color", "NO_COLOR=1"}, nil, false},
		{"NO_COLOR empty", []string{"TERM=xterm-256color", "NO_COLOR="}, nil, true},
		{"a dumb terminal", []string{"TERM=dumb"}, nil, false},
		{"no TERM", nil, nil, false},
		{"--color=never", []string{"TERM=xterm-256color"}, []string{"--color", "never"}, false},
		{"--color=always over NO_COLOR", []string{"TERM=dumb", "NO_COLOR=1"}, []string{"--color=always"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := onPTY(t, append(append([]string{}, base...), tt.env...), append(history, tt.flags...)...)
			if !strings.Contains(out, "killed") {
				t.Fatalf("no history on the terminal: %q", out)
			}
			if strings.Contains(out, painted) != tt.color {
				t.Errorf("colour %v, want %v: %q", !tt.color, tt.color, out)
			}
			if !tt.color && strings.Contains(out, "\x1b") {
				t.Errorf("an escape without colour: %q", out)
			}
		})
	}
	// The control: the same terminal's environment, stdout a pipe.
	r := clitest.RunReaper(t, []string{"TERM=xterm-256color", "NO_COLOR="}, history...)
	if r.Code != 0 || strings.Contains(r.Stdout, "\x1b") || !strings.Contains(r.Stdout, "killed") {
		t.Errorf("stdout a pipe: exit %d, %q; want the history without colour", r.Code, r.Stdout)
	}
}
