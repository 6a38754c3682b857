package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
)

// doctor runs `reaper doctor -o json` with args and returns its checks by
// name, with the run.
func doctorJSON(t *testing.T, env []string, args ...string) (map[string]audit.Check, *audit.Diagnosis, clitest.Result) {
	t.Helper()
	r := clitest.RunReaper(t, env, append([]string{"doctor", "-o", "json"}, args...)...)
	var d audit.Diagnosis
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil {
		t.Fatalf("doctor's JSON: %v\n%s\nstderr: %s", err, r.Stdout, r.Stderr)
	}
	byName := map[string]audit.Check{}
	for _, c := range d.Checks {
		byName[c.Name] = c
	}
	return byName, &d, r
}

// Every check is there, in order, and the exit status is 1 exactly when
// one failed, naming it.
func TestDoctorChecks(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "reaper.lock")
	if _, err := os.Stat(paths.SystemPolicy); err == nil && os.Geteuid() == 0 {
		skips.Skipf(t, "%s exists on this machine: doctor would judge it, not the embedded default", paths.SystemPolicy)
	}
	// The test's own home and config dirs, never the runner's: a policy or
	// a hook of the user's would change what doctor says.
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "CLAUDE_CONFIG_DIR="}
	checks, d, r := doctorJSON(t, env, "--lock-file", lock)
	var names []string
	var failed []string
	for _, c := range d.Checks {
		names = append(names, c.Name)
		if c.Status == audit.CheckFail {
			failed = append(failed, c.Name)
		}
		switch c.Status {
		case audit.CheckOK, audit.CheckInfo, audit.CheckWarn, audit.CheckFail:
		default:
			t.Errorf("check %q: status %q", c.Name, c.Status)
		}
		if c.Summary == "" {
			t.Errorf("check %q has no summary", c.Name)
		}
		if (c.Status == audit.CheckWarn || c.Status == audit.CheckFail) && c.Fix == "" && len(c.Details) == 0 {
			t.Errorf("check %q is %s with neither fix nor details", c.Name, c.Status)
		}
	}
	want := []string{"process table", "headroom", "pidfd", "watch", "cgroup v2", "privileges", "policy", "state dirs", "findings", "lock", "timer", "hooks", "records", "journal"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("checks %q, want %q", names, want)
	}
	if (r.Code == 1) != (len(failed) > 0) || (r.Code != 0 && r.Code != 1) {
		t.Errorf("exit %d with failed checks %q; stderr %s", r.Code, failed, r.Stderr)
	}
	if len(failed) > 0 && !strings.Contains(r.Stderr, strings.Join(failed, ", ")) {
		t.Errorf("stderr %q does not name the failed checks %q", r.Stderr, failed)
	}
	if n, _, _ := strings.Cut(checks["process table"].Summary, " "); n == "0" || n == "" {
		t.Errorf("process table: %q", checks["process table"].Summary)
	}
	if got := checks["lock"].Summary; got != lock+" is not there yet: the first reap makes it" {
		t.Errorf("lock: %q", got)
	}
	if got := checks["policy"]; got.Status != audit.CheckInfo || !strings.Contains(got.Summary, "embedded default") {
		t.Errorf("policy with no file: %+v", got)
	}
	if os.Geteuid() == 0 {
		if got := checks["privileges"].Summary; !strings.HasPrefix(got, "root") {
			t.Errorf("privileges as root: %q", got)
		}
	} else if got := checks["cgroup v2"]; got.Status != audit.CheckInfo {
		t.Errorf("cgroup v2 as a user: %+v", got)
	}

	// The table: every line within 80 columns, and the count.
	tr := clitest.RunReaper(t, env, "doctor", "--lock-file", lock)
	for _, line := range strings.Split(tr.Stdout, "\n") {
		if n := len([]rune(line)); n > 80 && !strings.Contains(line, "/") {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	if !strings.Contains(tr.Stdout, "14 checks: ") {
		t.Errorf("no count in:\n%s", tr.Stdout)
	}
}

// The policy in force: one that is invalid fails the check and the run
// (exit 1), naming file and line; a valid one is named with what its
// rules do.
func TestDoctorPolicy(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "reaper.lock")
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("version = 1\n[defaults]\naction = \"report\"\n\n[[rule]]\nname = \"x\"\nwhen = [\"reparented\"]\naction = \"explode\"\n"), 0o644)
	checks, _, r := doctorJSON(t, nil, "--policy", bad, "--lock-file", lock)
	if c := checks["policy"]; c.Status != audit.CheckFail || !strings.Contains(strings.Join(c.Details, "\n"), bad+":") {
		t.Errorf("invalid policy: %+v", c)
	}
	if r.Code != 1 || !strings.Contains(r.Stderr, "failed: policy") {
		t.Errorf("invalid policy: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if c := checks["findings"]; !strings.Contains(strings.Join(c.Details, "\n"), "embedded default") {
		t.Errorf("findings with an invalid policy do not say what they were planned with: %+v", c)
	}

	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("version = 1\n[defaults]\naction = \"report\"\ngrace = \"7s\"\n\n[[rule]]\nname = \"t\"\nwhen = [\"reparented\"]\ncmdline = \"reaper-doctor-test-"+strconv.Itoa(os.Getpid())+"\"\naction = \"terminate\"\n\n[[rule]]\nname = \"r\"\nwhen = [\"reparented\"]\naction = \"report\"\n"), 0o644)
	checks, _, r = doctorJSON(t, nil, "--policy", good, "--lock-file", lock)
	c := checks["policy"]
	if c.Status != audit.CheckOK || !strings.Contains(c.Summary, good+" (--policy), 2 rules: 1 terminate, 1 report") {
		t.Errorf("valid policy: %+v (stderr %s)", c, r.Stderr)
	}
	if !strings.Contains(strings.Join(c.Details, "\n"), "grace 7s") {
		t.Errorf("valid policy's defaults: %+v", c.Details)
	}
}

// The lock: free, held (by this test, named by pid), and where reap could
// not make it.
func TestDoctorLock(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "reaper.lock")
	release, err := platform.Lock(lock, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	checks, _, _ := doctorJSON(t, nil, "--lock-file", lock)
	if got, want := checks["lock"].Summary, "is held by pid "+strconv.Itoa(os.Getpid()); !strings.Contains(got, want) {
		t.Errorf("held: %q, want %q", got, want)
	}
	release()
	checks, _, _ = doctorJSON(t, nil, "--lock-file", lock)
	if got := checks["lock"]; got.Status != audit.CheckOK || got.Summary != lock+" is free" {
		t.Errorf("released: %+v", got)
	}

	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	checks, _, r := doctorJSON(t, nil, "--lock-file", filepath.Join(file, "sub", "reaper.lock"))
	if got := checks["lock"]; got.Status != audit.CheckFail || !strings.Contains(got.Summary, "not a directory") {
		t.Errorf("below a file: %+v", got)
	}
	if r.Code != 1 {
		t.Errorf("below a file: exit %d", r.Code)
	}
	// What the check predicts is what reap meets.
	empty := filepath.Join(dir, "empty.toml")
	os.WriteFile(empty, []byte("version = 1\n[defaults]\naction = \"report\"\n"), 0o644)
	if rr := clitest.RunReaper(t, nil, "reap", "--dry-run", "--policy", empty, "--lock-file", filepath.Join(file, "sub", "reaper.lock")); rr.Code != 1 || !strings.Contains(rr.Stderr, "lock") {
		t.Errorf("reap below a file: exit %d, %s", rr.Code, rr.Stderr)
	}

	if os.Geteuid() != 0 {
		return
	}
	theirs := filepath.Join(dir, "theirs.lock")
	os.WriteFile(theirs, nil, 0o600)
	os.Chown(theirs, 65534, 65534)
	checks, _, _ = doctorJSON(t, nil, "--lock-file", theirs)
	if got := checks["lock"]; got.Status != audit.CheckFail || !strings.Contains(got.Summary, "owned by uid 65534") {
		t.Errorf("another user's lock: %+v", got)
	}
}

// A user's state dir that its owner cannot read is listed with what went
// wrong, and the check warns whose trees are held back; the same dir that
// its owner can read is listed as read (the control).
func TestDoctorStateDirs(t *testing.T) {
	clitest.RequireRoot(t)
	runAs(t, 65534) // a user's state is read when they own a process
	base, err := os.MkdirTemp("", "reaper-doctor-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	state := filepath.Join(base, "openclaw")
	acpx := filepath.Join(state, "acpx")
	os.MkdirAll(acpx, 0o755)
	lease := filepath.Join(acpx, "process-leases.json")
	os.WriteFile(lease, []byte(`{"version":1,"leases":[]}`), 0o644)
	for _, p := range []string{state, acpx, lease} {
		os.Chown(p, 65534, 65534)
	}
	env := []string{"OPENCLAW_STATE_DIR=" + state}
	lock := filepath.Join(base, "reaper.lock")
	line := func(checks map[string]audit.Check) string {
		for _, d := range checks["state dirs"].Details {
			if strings.Contains(d, state) {
				return d
			}
		}
		t.Fatalf("%s not listed: %+v", state, checks["state dirs"])
		return ""
	}
	checks, _, _ := doctorJSON(t, env, "--lock-file", lock)
	if got := line(checks); !strings.HasSuffix(got, ": read") || !strings.Contains(got, "uid 65534") {
		t.Errorf("readable: %q", got)
	}
	os.Chown(acpx, 0, 0)
	os.Chmod(acpx, 0o700)
	checks, _, _ = doctorJSON(t, env, "--lock-file", lock)
	if got := line(checks); strings.HasSuffix(got, ": read") || !strings.Contains(got, "permission") {
		t.Errorf("unreadable by its owner: %q", got)
	}
	if c := checks["state dirs"]; c.Status != audit.CheckWarn || !strings.Contains(c.Summary, "uid 65534") || !strings.Contains(c.Summary, "held back") {
		t.Errorf("unreadable by its owner: %+v", c)
	}
}
