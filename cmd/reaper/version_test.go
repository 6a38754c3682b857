package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// `reaper version -o json` says what a script needs; the test binary is
// built with -buildvcs=false, so it says that no commit was stamped.
func TestVersionJSON(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	r := clitest.RunReaper(t, nil, "version", "-o", "json")
	var v struct {
		Version, Commit, OS, Arch, Go string
	}
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil || r.Code != 0 {
		t.Fatalf("version -o json: exit %d, %v\n%s", r.Code, err, r.Stdout)
	}
	if v.Version == "" || v.OS == "" || v.Arch == "" || !strings.HasPrefix(v.Go, "go") || v.Commit != "" {
		t.Errorf("version -o json: %+v", v)
	}
	if r := clitest.RunReaper(t, nil, "version"); !strings.Contains(r.Stdout, "no commit stamped") {
		t.Errorf("version: the table does not say no commit was stamped:\n%s", r.Stdout)
	}
}

// A binary built with go build in a git checkout prints the commit it was
// built from, as the toolchain stamped it, and a version made of it.
func TestVersionStampsTheCommit(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		skips.Skip(t, "not a git checkout git can read here: nothing to stamp")
	}
	bin := filepath.Join(t.TempDir(), "reaper")
	build := exec.Command(clitest.GoTool(), "build", "-buildvcs=true", "-o", bin, ".")
	build.Env = append(build.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	var v struct{ Version, Commit string }
	if err != nil || json.Unmarshal(out, &v) != nil {
		t.Fatalf("version: %v\n%s", err, out)
	}
	if v.Commit != strings.TrimSpace(string(head)) || v.Version == "(devel)" {
		t.Errorf("version %q commit %q, want the commit %s stamped", v.Version, v.Commit, head)
	}
}

// -q prints only what was asked for and every failure: a valid policy
// says nothing (its exit status says it), an invalid one still prints its
// errors. The control: without -q the valid one says so.
func TestQuietPolicyCheck(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	valid := "../../packaging/policy.example.toml"
	if r := clitest.RunReaper(t, nil, "policy", "check", "-q", valid); r.Code != 0 || r.Stdout != "" {
		t.Errorf("-q, valid: exit %d, stdout %q; want 0 and nothing", r.Code, r.Stdout)
	}
	if r := clitest.RunReaper(t, nil, "policy", "check", valid); !strings.Contains(r.Stdout, "valid:") {
		t.Errorf("control, no -q: %q", r.Stdout)
	}
	if r := clitest.RunReaper(t, nil, "policy", "check", "-q", "../../testdata/policy/invalid.toml"); r.Code != 78 || !strings.Contains(r.Stderr, "invalid.toml:4:") {
		t.Errorf("-q, invalid: exit %d, stderr %q; want 78 and its errors", r.Code, r.Stderr)
	}
}
