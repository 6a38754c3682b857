package main

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// On Windows reaper installs no hook, service or timer yet, and says so
// before it plans anything — not a refusal of the binary's path, whose
// `\` and `:` a Unix command line would take apart. The control: a verb
// that reads runs there.
func TestWindowsInstallsNothing(t *testing.T) {
	for _, args := range [][]string{
		{"init", "--dry-run"},
		{"init", "--yes", "--no-service"},
		{"hook", "install", "claude-code", "--dry-run"},
		{"service", "install", "--user", "--dry-run"},
	} {
		r := clitest.RunReaper(t, nil, args...)
		if r.Code == 0 || !strings.Contains(r.Stderr, "installs no hook, service or timer on Windows yet") || strings.Contains(r.Stderr, "would take apart") {
			t.Errorf("%v: exit %d\n%s", args, r.Code, r.Stderr)
		}
	}
	if r := clitest.RunReaper(t, nil, "policy", "show"); r.Code != 0 {
		t.Errorf("control: policy show: exit %d\n%s", r.Code, r.Stderr)
	}
}
