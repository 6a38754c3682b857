package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client/clienttest"
	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/policy"
	"github.com/spf13/cobra"
)

func TestExitCodes(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	dir := t.TempDir()
	valid := filepath.Join(dir, "ok.toml")
	if err := os.WriteFile(valid, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const invalid = "../../testdata/policy/invalid.toml"
	// A FIFO would block a reader that opens it without O_NONBLOCK until a
	// writer came: none ever does here.
	fifo := filepath.Join(dir, "fifo.toml")
	if err := clienttest.Mkfifo(fifo, 0o644); err != nil && (runtime.GOOS != "windows" || !errors.Is(err, errors.ErrUnsupported)) {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.toml")
	if err := os.WriteFile(huge, bytes.Repeat([]byte("# padding\n"), 200_000), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		stdout string
	}{
		{"help", []string{"--help"}, 0, "", "reaper scan"},
		{"unknown command", []string{"bogus"}, 2, `unknown command or argument "bogus"`, ""},
		{"unknown flag", []string{"scan", "--bogus"}, 2, "unknown flag: --bogus", ""},
		{"bad output", []string{"scan", "--output", "xml"}, 2, `--output "xml": want table or json`, ""},
		{"output in capitals", []string{"scan", "--proc", "../../testdata/proc", "-o", "JSON"}, 0, "", `"schema_version": 1`},
		{"scan takes no arguments", []string{"scan", "extra"}, 2, "unknown command or argument", ""},
		{"a negative timeout", []string{"scan", "--timeout", "-1s"}, 2, "--timeout -1s: want a duration of 0 or more", ""},
		{"hook install of no client", []string{"hook", "install"}, 2, "needs one CLIENT (got 0)", ""},
		{"an unknown hook subcommand", []string{"hook", "list"}, 2, `unknown command or argument "list" for "reaper hook"`, ""},
		{"an unknown service subcommand", []string{"service", "foo"}, 2, `unknown command or argument "foo" for "reaper service"`, ""},
		{"run of nothing", []string{"run"}, 2, "needs at least one CMD (got 0)", ""},
		{"run of a command not there: 127, as env", []string{"run", "--", filepath.Join(dir, "nowhere")}, 127, "no such file or directory", ""},
		{"run of a file not executable: 126", []string{"run", "--", valid}, 126, "permission denied", ""},
		{"policy check valid", []string{"policy", "check", valid}, 0, "", "valid: 0 owners"},
		{"policy check invalid", []string{"policy", "check", invalid}, 78, invalid + ":4: grace \"soon\" is not a duration", ""},
		{"policy check lists every error", []string{"policy", "check", invalid}, 78, invalid + ":9: unknown key \"actoin\"", ""},
		{"policy check missing file", []string{"policy", "check", filepath.Join(dir, "nope.toml")}, 66, "nope.toml: no such file or directory", ""},
		{"policy check a FIFO", []string{"policy", "check", fifo}, 66, "fifo.toml: not a regular file", ""},
		{"policy check a device", []string{"policy", "check", "/dev/zero"}, 66, "/dev/zero: not a regular file", ""},
		{"policy check a huge file", []string{"policy", "check", huge}, 78, "huge.toml: larger than the size cap (1 MiB)", ""},
		{"policy check needs a file", []string{"policy", "check"}, 2, "reaper: reaper policy check needs one FILE (got 0)\nRun 'reaper policy check --help' for usage.", ""},
		{"every line of a multi-error carries reaper:", []string{"policy", "check", invalid}, 78, "\nreaper: " + invalid + ":9:", ""},
		{"a flag error points at the subcommand's help", []string{"scan", "--bogus"}, 2, "Run 'reaper scan --help' for usage.", ""},
		{"scan with invalid policy", []string{"scan", "--policy", invalid}, 78, invalid + ":8: unknown reason \"orphan\"", ""},
		{"policy show", []string{"policy", "show"}, 0, "", "version = 1"},
		{"policy show --example: the shipped example", []string{"policy", "show", "--example"}, 0, "", "user = [\"@evidence\"]"},
		{"the shipped example policy", []string{"policy", "check", "../../packaging/policy.example.toml"}, 0, "", "15 rules (8 that signal)"},
		{"ledger validate valid", []string{"ledger", "validate", "../../testdata/ledger/fixture.json"}, 0, "", "valid: 1 ledger, 5 runs, 2 sessions"},
		{"ledger validate invalid", []string{"ledger", "validate", "../../testdata/ledger/fixture.json", "../../testdata/ledger/invalid.json"}, 78,
			"invalid.json:6: pid: a JSON string where an int is wanted", "fixture.json: valid"},
		{"ledger validate a plain dir", []string{"ledger", "validate", dir}, 78, "no known agent client's state dir (openclaw, ", ""},
		{"ledger validate a missing path: 66, as ledger show", []string{"ledger", "validate", filepath.Join(dir, "none.json")}, 66, "1 of 1 paths could not be opened", ""},
		{"ledger show a missing path", []string{"ledger", "show", filepath.Join(dir, "none.json")}, 66, "none.json", ""},
		{"ledger validate needs a path", []string{"ledger", "validate"}, 2, "reaper ledger validate needs at least one PATH (got 0)\nRun 'reaper ledger validate --help'", ""},
		{"scan with an invalid ledger", []string{"scan", "--ledger", "../../testdata/ledger/invalid.json"}, 78, "invalid.json:6:", ""},
		{"scan with a missing ledger", []string{"scan", "--ledger", filepath.Join(dir, "none.json")}, 66, "none.json: cannot be opened: no such file or directory", ""},
		{"scan with a FIFO for a ledger", []string{"scan", "--ledger", fifo}, 66, "fifo.toml: not a regular file", ""},
		{"reap refuses --proc", []string{"reap", "--proc", "../../testdata/proc", "--lock-file", filepath.Join(dir, "lock")}, 2, "--proc is for scan only", ""},
		{"scan --exit-code with findings", []string{"scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml", "--exit-code"}, 4, "", "findings"},
		{"scan --exit-code without (the control)", []string{"scan", "--proc", "../../testdata/proc", "--policy", valid, "--exit-code"}, 0, "", "0 findings"},
		{"history of an unknown user", []string{"history", "--user", "nosuchuser-reaper", "--audit-log", "/dev/null"}, 2, `--user "nosuchuser-reaper": no such user here`, ""},
		{"version", []string{"version"}, 0, "", "reaper "},
		{"--version", []string{"--version"}, 0, "", "reaper "},
		{"completion bash", []string{"completion", "bash"}, 0, "", "__start_reaper"},
		{"completion zsh", []string{"completion", "zsh"}, 0, "", "#compdef reaper"},
		{"completion fish", []string{"completion", "fish"}, 0, "", "complete -c reaper"},
		{"completion powershell", []string{"completion", "powershell"}, 2, "unknown shell", ""},
	}
	if runtime.GOOS == "linux" {
		tests = append(tests, struct {
			name   string
			args   []string
			code   int
			stderr string
			stdout string
		}{"unreadable proc root", []string{"scan", "--proc", filepath.Join(dir, "none")}, 1, "open process table", ""})
	}
	// On Windows the cases that meet Unix's own files and words are left
	// out: a FIFO, /dev, the /proc fixtures, the errno's text ("no such
	// file or directory", "permission denied"), a file's execute bit.
	// The rest run there as here.
	unixOnly := func(args []string, stderr string) bool {
		all := strings.Join(args, " ") + " " + stderr
		for _, s := range []string{fifo, "/dev/", "--proc", "no such file", "permission denied", "run --"} {
			if strings.Contains(all, s) {
				return true
			}
		}
		return false
	}
	for _, tt := range tests {
		if runtime.GOOS == "windows" && unixOnly(tt.args, tt.stderr) {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			r := clitest.RunReaper(t, []string{"XDG_CONFIG_HOME=" + dir}, tt.args...)
			if r.Code != tt.code {
				t.Errorf("exit %d, want %d\nstderr: %s", r.Code, tt.code, r.Stderr)
			}
			if !strings.Contains(r.Stderr, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", r.Stderr, tt.stderr)
			}
			if !strings.Contains(r.Stdout, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", r.Stdout, tt.stdout)
			}
			if tt.code == 78 && r.Stdout != "" && tt.args[0] != "ledger" {
				t.Errorf("an invalid policy printed a report: %q", r.Stdout)
			}
		})
	}
}

// TestScanThisMachine runs `reaper scan` with no arguments on the real
// process table: the README's first command.
func TestScanThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		skips.Skip(t, "the live scan is implemented on Linux, macOS and Windows")
	}
	if _, err := os.Stat(paths.SystemPolicy); err == nil && os.Geteuid() == 0 {
		skips.Skipf(t, "%s exists on this machine", paths.SystemPolicy)
	}
	env := []string{"XDG_CONFIG_HOME=" + t.TempDir()}
	r := clitest.RunReaper(t, env, "scan")
	if r.Code != 0 || !strings.Contains(r.Stdout, "policy: embedded default") || !strings.Contains(r.Stdout, "reclaimable") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = clitest.RunReaper(t, env, "scan", "--output", "json")
	var rep struct {
		SchemaVersion int    `json:"schema_version"`
		Mode          string `json:"mode"`
		Processes     int    `json:"processes"`
		Findings      []any  `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, r.Stdout)
	}
	if rep.SchemaVersion != 1 || rep.Mode != "scan" || rep.Processes < 2 || rep.Findings == nil {
		t.Errorf("report %+v", rep)
	}
}

func TestAuditLogAndMetrics(t *testing.T) {
	if runtime.GOOS != "linux" {
		skips.Skip(t, "--proc fixtures are Linux only")
	}
	dir := t.TempDir()
	logPath, metricsPath := filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "reaper.prom")
	for i := 0; i < 2; i++ {
		r := clitest.RunReaper(t, nil, "scan", "--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml",
			"--audit-log", logPath, "--metrics", metricsPath, "-o", "json")
		if r.Code != 0 {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2*6 {
		t.Fatalf("%d audit lines after two runs, want 12 (6 findings each)", len(lines))
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		for _, k := range []string{"time", "event", "root_pid", "start", "rule", "action", "outcome"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("audit line lacks %q: %s", k, l)
			}
		}
	}
	m, err := os.ReadFile(metricsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`reaper_findings{rule="orphaned-mcp",kind="mcp",action="kill",outcome="protected"} 1`,
		"reaper_reclaimable_bytes ",
		"# TYPE reaper_zombies gauge\nreaper_zombies 2\n",
	} {
		if !strings.Contains(string(m), want) {
			t.Errorf("metrics lack %q:\n%s", want, m)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".reaper.prom.*")); len(leftovers) > 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
}

func TestExitCodeMapping(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{usagef("bad flag"), 2},
		{&audit.StatusError{Code: audit.ExitPartial, Msg: "1 planned action failed"}, 3},
		{&audit.StatusError{Code: audit.ExitPermission, Msg: "no privilege"}, 77},
		{&policy.Error{File: "p.toml", Line: 3, Msg: "bad"}, 78},
		{fmt.Errorf("wrapped: %w", &ledger.Error{File: "l.json", Msg: "bad"}), 78},
		{configError{errors.New("2 of 3 paths are invalid")}, 78},
		{fmt.Errorf("x: %w", errors.ErrUnsupported), 1},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err, io.Discard); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// Issue 52, item 9: `reaper --help` never named `reaper init`, the one
// step that makes reaper act, and left exit 4 out. Its Exit status
// paragraph names every status audit/exit.go defines.
func TestHelpNamesInitAndEveryExitStatus(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	r := clitest.RunReaper(t, nil, "--help")
	if !strings.Contains(r.Stdout, "'reaper init'") {
		t.Errorf("--help does not name reaper init:\n%s", r.Stdout)
	}
	_, status, _ := strings.Cut(r.Stdout, "Exit status:")
	status, _, _ = strings.Cut(status, "Usage:")
	status = strings.Join(strings.Fields(status), " ")
	for _, code := range []int{audit.ExitOK, audit.ExitError, audit.ExitUsage, audit.ExitPartial, audit.ExitFindings, audit.ExitNoInput, audit.ExitPermission, audit.ExitConfig} {
		if !strings.Contains(status, " "+strconv.Itoa(code)+" ") && !strings.HasPrefix(status, strconv.Itoa(code)+" ") {
			t.Errorf("exit %d (%s) is not in --help's exit statuses: %q", code, audit.ExitMeaning(code), status)
		}
	}
}

// Every command's long help is made when it is shown, not at the start
// (docs.Lazy): each must still make one — a help text whose placeholder
// its command does not fill panics (docs.Help) — and none is made until
// asked.
func TestEveryCommandsHelp(t *testing.T) {
	t.Parallel()
	g := newGlobalOptions()
	root := newRootCommand(g)
	var walk func(c *cobra.Command, do func(*cobra.Command))
	walk = func(c *cobra.Command, do func(*cobra.Command)) {
		do(c)
		for _, sub := range c.Commands() {
			walk(sub, do)
		}
	}
	n := 0
	walk(root, func(c *cobra.Command) {
		if g.help.Has(c) {
			n++
			if c.Long != "" {
				t.Errorf("%s: its long help made at the start", c.CommandPath())
			}
		}
	})
	if n < 20 {
		t.Fatalf("%d commands with a long help, want every command's", n)
	}
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"scan", "--help"})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "scan reads the process table once") {
		t.Errorf("scan --help: %v\n%s", err, out.String())
	}
	g.help.FillTree(root)
	walk(root, func(c *cobra.Command) {
		if g.help.Has(c) && c.Long == "" {
			t.Errorf("%s: no long help", c.CommandPath())
		}
	})
}
