package doctor

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
)

const unitExecStart = "{ path=/usr/bin/reaper ; argv[]=/usr/bin/reaper reap --quiet --audit-log /var/log/reaper/audit.jsonl --metrics=/var/lib/prometheus/node-exporter/reaper.prom ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }"

func TestExecArgv(t *testing.T) {
	argv := execArgv(unitExecStart)
	want := []string{"/usr/bin/reaper", "reap", "--quiet", "--audit-log", "/var/log/reaper/audit.jsonl", "--metrics=/var/lib/prometheus/node-exporter/reaper.prom"}
	if !reflect.DeepEqual(argv, want) {
		t.Fatalf("argv %q, want %q", argv, want)
	}
	if got := flagValue(argv, "audit-log"); got != "/var/log/reaper/audit.jsonl" {
		t.Errorf("--audit-log %q", got)
	}
	if got := flagValue(argv, "metrics"); got != "/var/lib/prometheus/node-exporter/reaper.prom" {
		t.Errorf("--metrics= %q", got)
	}
	if got := flagValue(argv, "policy"); got != "" {
		t.Errorf("--policy %q, want none", got)
	}
	if got := execArgv(""); got != nil {
		t.Errorf("no ExecStart: %q", got)
	}
}

// The timer's state and its last run, each as systemctl show prints it,
// and what doctor makes of them.
func TestSystemdCheck(t *testing.T) {
	now := time.Unix(1764000000, 0)
	at := func(ago time.Duration) string { return "@" + strconv.Itoa(int(now.Add(-ago).Unix())) }
	enabled := "LoadState=loaded\nUnitFileState=enabled\nActiveState=active\nLastTriggerUSec=" + at(40*time.Second) + "\n"
	ran := func(result string, status int) string {
		return "LoadState=loaded\nResult=" + result + "\nExecMainStatus=" + strconv.Itoa(status) +
			"\nExecMainExitTimestamp=" + at(38*time.Second) + "\nExecStart=" + unitExecStart + "\n"
	}
	for _, tt := range []struct {
		name           string
		user           bool
		timer, service string
		status         string
		want           []string // in the summary, details or fix
	}{
		{"not installed", false, "LoadState=not-found\nUnitFileState=\nActiveState=inactive\nLastTriggerUSec=n/a\n", "LoadState=not-found\n",
			audit.CheckWarn, []string{"not installed", "sudo reaper service install"}},
		{"not installed, user", true, "LoadState=not-found\n", "LoadState=not-found\n",
			audit.CheckWarn, []string{"reaper service install --user"}},
		{"disabled", false, strings.Replace(enabled, "enabled", "disabled", 1), ran("success", 0),
			audit.CheckWarn, []string{"installed but disabled", "systemctl enable --now reaper.timer", "exit 0 (success)"}},
		{"stopped", false, strings.Replace(enabled, "=active", "=inactive", 1), ran("success", 0),
			audit.CheckWarn, []string{"enabled but inactive", "systemctl start reaper.timer"}},
		{"never ran", false, "LoadState=loaded\nUnitFileState=enabled\nActiveState=active\nLastTriggerUSec=n/a\n", "LoadState=loaded\nResult=success\nExecMainStatus=0\nExecMainExitTimestamp=n/a\n",
			audit.CheckOK, []string{"has not run since boot"}},
		{"ran", false, enabled, ran("success", 0),
			audit.CheckOK, []string{"enabled and active", "last run ended 38s ago: exit 0 (success)", "runs: /usr/bin/reaper reap --quiet"}},
		{"invalid policy", false, enabled, ran("exit-code", 78),
			audit.CheckFail, []string{"exit 78 (invalid policy or ledger: nothing was signalled)", "journalctl -u reaper.service"}},
		{"refused", false, enabled, ran("exit-code", 3),
			audit.CheckWarn, []string{"exit 3 (a planned action was refused or failed)"}},
		{"killed", true, enabled, ran("timeout", 0),
			audit.CheckFail, []string{"ended 38s ago: timeout", "journalctl --user -u reaper.service"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := systemdCheck(tt.user, parseProps(tt.timer), parseProps(tt.service), now)
			checkSays(t, c, tt.status, tt.want)
		})
	}
}

// launchctl print of a loaded job, abridged from macOS 14.
const launchctlPrint = `system/dev.orphanreaper.reaper = {
	active count = 0
	path = /Library/LaunchDaemons/dev.orphanreaper.reaper.plist
	type = LaunchDaemon
	state = not running

	program = /usr/local/bin/reaper
	arguments = {
		/usr/local/bin/reaper
		reap
		--quiet
		--audit-log
		/var/log/reaper/audit.jsonl
	}

	stdout path = /var/log/reaper/reaper.out
	stderr path = /var/log/reaper/reaper.err
	runs = 12
	last exit code = LAST
	event triggers = {
		runs = 99
	}
}
`

func TestLaunchdCheck(t *testing.T) {
	for _, tt := range []struct {
		name, last string
		found      bool
		status     string
		want       []string
	}{
		{"not loaded", "", false, audit.CheckWarn, []string{"no launchd job", "reaper service install", "brew services start reaper"}},
		{"ran", "0", true, audit.CheckOK, []string{"is loaded", "12 runs; last exit 0 (success)", "runs: /usr/local/bin/reaper reap --quiet --audit-log"}},
		{"never exited", "(never exited)", true, audit.CheckOK, []string{"last exit: (never exited)"}},
		{"invalid policy", "78", true, audit.CheckFail, []string{"last exit 78 (invalid policy", "StandardErrorPath"}},
		{"refused", "3", true, audit.CheckWarn, []string{"last exit 3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := strings.Replace(launchctlPrint, "LAST", tt.last, 1)
			c := launchdCheck("system/dev.orphanreaper.reaper", tt.found, out)
			checkSays(t, c, tt.status, tt.want)
		})
	}
	if got := launchdArgs(launchctlPrint); flagValue(got, "audit-log") != "/var/log/reaper/audit.jsonl" {
		t.Errorf("launchd args %q", got)
	}
}

// checkSays fails t unless c has status and says every one of want in
// its summary, details or fix.
func checkSays(t *testing.T, c audit.Check, status string, want []string) {
	t.Helper()
	if c.Status != status {
		t.Errorf("status %s, want %s: %+v", c.Status, status, c)
	}
	text := c.Summary + "\n" + strings.Join(c.Details, "\n") + "\n" + c.Fix
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("no %q in:\n%s", w, text)
		}
	}
}

// reaper-watch.service's state, as systemctl show prints it, and what
// doctor makes of it; a disabled, stopped watch is not in use, and the
// timer is judged instead.
func TestWatchCheck(t *testing.T) {
	const execStart = "{ path=/usr/bin/reaper ; argv[]=/usr/bin/reaper watch --quiet --audit-log /var/log/reaper/audit.jsonl ; ignore_errors=no }"
	running := "LoadState=loaded\nUnitFileState=enabled\nActiveState=active\nSubState=running\nResult=success\nNRestarts=0\n" +
		"StatusText=last pass 2s ago (hint): 0 findings, 3 owners watched\nExecStart=" + execStart + "\n"
	for _, tt := range []struct {
		name   string
		user   bool
		props  string
		inUse  bool
		status string
		want   []string
	}{
		{"not installed", false, "LoadState=not-found\nUnitFileState=\nActiveState=inactive\n", false, "", nil},
		{"installed, not enabled", false, "LoadState=loaded\nUnitFileState=disabled\nActiveState=inactive\n", false, "", nil},
		{"running", false, running, true, audit.CheckOK,
			[]string{"is running", "status: last pass 2s ago (hint): 0 findings, 3 owners watched", "runs: /usr/bin/reaper watch --quiet"}},
		{"started by hand, not enabled", true, strings.Replace(running, "UnitFileState=enabled", "UnitFileState=disabled", 1), true, audit.CheckOK, []string{"is running"}},
		{"starting", false, strings.Replace(running, "=active", "=activating", 1), true, audit.CheckInfo, []string{"first pass has not ended"}},
		{"failed", true, strings.NewReplacer("=active", "=failed", "Result=success", "Result=watchdog", "NRestarts=0", "NRestarts=4").Replace(running), true,
			audit.CheckFail, []string{"failed (watchdog)", "journalctl --user -u reaper-watch.service", "restarted 4 times"}},
		{"enabled, stopped", false, strings.Replace(running, "=active", "=inactive", 1), true, audit.CheckWarn, []string{"enabled but inactive", "'systemctl start reaper-watch.service'"}},
		{"hostile status", false, strings.Replace(running, "StatusText=last", "StatusText=\x1b[2Jlast", 1), true, audit.CheckOK, []string{`status: \x1b[2Jlast`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			props := parseProps(tt.props)
			if got := watchInUse(props); got != tt.inUse {
				t.Fatalf("in use %v, want %v", got, tt.inUse)
			}
			if !tt.inUse {
				return
			}
			c := watchCheck(tt.user, props)
			all := c.Summary + "\n" + strings.Join(c.Details, "\n") + "\n" + c.Fix
			if c.Name != "timer" || c.Status != tt.status {
				t.Errorf("check %q %s, want timer %s: %+v", c.Name, c.Status, tt.status, c)
			}
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("%q not in %q", w, all)
				}
			}
		})
	}
}
