//go:build linux

package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/schematest"
)

type ReapFinding struct {
	RootPID  int      `json:"root_pid"`
	PIDs     []int    `json:"pids"`
	Kind     string   `json:"kind"`
	Rule     string   `json:"rule"`
	Owner    string   `json:"owner"`
	Reasons  []string `json:"reasons"`
	Evidence []string `json:"evidence"`
	Outcome  string   `json:"outcome"`
	Detail   string   `json:"detail"`
	Deferred bool     `json:"deferred"`
	DueAt    string   `json:"due_at"`
}

// ReapReport is the part of the reap JSON these tests read.
type ReapReport struct {
	Findings []ReapFinding `json:"findings"`
	Zombies  []struct {
		PID int `json:"pid"`
	} `json:"zombies"`
	Ledger []struct {
		RunID  string `json:"run_id"`
		PID    int    `json:"pid"`
		Status string `json:"status"`
		Detail string `json:"detail"`
	} `json:"ledger"`
	Errors []string `json:"errors"`
}

// Finding returns the Finding rooted at pid, or nil.
func (r *ReapReport) Finding(pid int) *ReapFinding {
	for i := range r.Findings {
		if r.Findings[i].RootPID == pid {
			return &r.Findings[i]
		}
	}
	return nil
}

// Count is how many findings have the outcome.
func (r *ReapReport) Count(outcome string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Outcome == outcome {
			n++
		}
	}
	return n
}

func ReapJSON(t *testing.T, args ...string) (*ReapReport, Result) {
	t.Helper()
	r := RunReaper(t, nil, append([]string{"reap", "--output", "json", "--lock-file", filepath.Join(t.TempDir(), "lock")}, args...)...)
	var rep ReapReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("reap: exit %d, %v\nstdout %s\nstderr %s", r.Code, err, r.Stdout, r.Stderr)
	}
	roots := map[int]bool{}
	for _, f := range rep.Findings {
		if roots[f.RootPID] {
			t.Errorf("two findings rooted at %d: %+v", f.RootPID, rep.Findings)
		}
		roots[f.RootPID] = true
	}
	return &rep, r
}

// ScanReport is the part of `reaper scan --output json` these tests read.
type ScanReport struct {
	Findings []struct {
		RootPID  int      `json:"root_pid"`
		PIDs     []int    `json:"pids"`
		Reasons  []string `json:"reasons"`
		RunID    string   `json:"run_id"`
		Rule     string   `json:"rule"`
		Kind     string   `json:"kind"`
		Evidence []string `json:"evidence"`
	} `json:"findings"`
	Ledger []struct {
		RunID  string `json:"run_id"`
		PID    int    `json:"pid"`
		Status string `json:"status"`
		Info   string `json:"info"`
	} `json:"ledger"`
}

func (r *ScanReport) Finding(root int) (reasons []string, run string, ok bool) {
	for _, f := range r.Findings {
		if f.RootPID == root {
			return f.Reasons, f.RunID, true
		}
	}
	return nil, "", false
}

func (r *ScanReport) Covers(pid int) bool {
	for _, f := range r.Findings {
		if slices.Contains(f.PIDs, pid) {
			return true
		}
	}
	return false
}

func (r *ScanReport) Status(run string) string {
	for _, l := range r.Ledger {
		if l.RunID == run {
			return l.Status
		}
	}
	return ""
}

// WritePolicy writes a test policy, every rule of it confined to the
// processes this suite started (markRules).
func WritePolicy(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte(MarkRules(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func ScanJSON(t *testing.T, args ...string) *ScanReport {
	t.Helper()
	r := RunReaper(t, nil, append([]string{"scan", "--output", "json"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("reaper scan %v: exit %d\n%s", args, r.Code, r.Stderr)
	}
	var rep ScanReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	return &rep
}

// ExamplePolicy is packaging/policy.example.toml as shipped, with
// three changes a test needs: every rule confined by marks in argv (its
// rules set env themselves, so the env mark cannot be added) — marks is a
// regex, such as "markA|markB" — min_age 0, and this test process named as
// a subreaper.
func ExamplePolicy(t *testing.T, marks string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(), "packaging/policy.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	pol := strings.Replace(string(b), `min_age = "2m"`, `min_age = "0s"`, 1)
	if !strings.Contains(pol, `min_age = "0s"`) || strings.Count(pol, "[[rule]]") != 15 {
		t.Fatal("the example policy changed shape: update this test")
	}
	pol = strings.ReplaceAll(pol, "[[rule]]", fmt.Sprintf("[[rule]]\ncmdline = '%s'", marks))
	pol = strings.Replace(pol, "[[subreaper]]", SelfSubreaper(t)+"\n[[subreaper]]", 1)
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// PSDoc is the part of `reaper ps -o json` these tests read.
type PSDoc struct {
	Sessions []struct {
		Client, State, SessionID, Record string
		PID, Leaks                       int
		Session                          string `json:"session_id"`
		MemoryBytes                      uint64 `json:"memory_bytes"`
		Leftovers                        []int  `json:"leftovers"`
		Processes                        []struct {
			PID         int
			Kind        string
			MemoryBytes uint64 `json:"memory_bytes"`
			Leak        []string
		} `json:"processes"`
	} `json:"sessions"`
	Orphans []struct {
		RootPID   int    `json:"root_pid"`
		SessionID string `json:"session_id"`
		Rule      string `json:"rule"`
	} `json:"orphans"`
}

// PSSession finds pid's session in ps's JSON: its client, whether it holds
// each of want (pid → the leak reason it must carry, "" for none) with
// that mark, and the JSON for a message.
func PSSession(t *testing.T, pol string, pid int, want map[int]string) (client string, ok bool, out string) {
	t.Helper()
	r := RunReaper(t, nil, "ps", "-o", "json", "--policy", pol)
	var doc PSDoc
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("ps: exit %d: %v\n%s", r.Code, err, r.Stderr)
	}
	for _, s := range doc.Sessions {
		if s.PID != pid {
			continue
		}
		seen := 0
		for _, p := range s.Processes {
			leak, asked := want[p.PID]
			if !asked {
				continue
			}
			if (leak == "") == (len(p.Leak) == 0) && (leak == "" || HasString(p.Leak, leak)) {
				seen++
			}
		}
		return s.Client, seen == len(want), r.Stdout
	}
	return "", false, r.Stdout
}

// ValidPS fails t when out does not keep to the shipped ps.schema.json.
func ValidPS(t *testing.T, out string) {
	t.Helper()
	schema, _ := os.ReadFile(filepath.Join(Root(), "audit/ps.schema.json"))
	if errs, err := schematest.Validate(schema, []byte(out)); err != nil || len(errs) > 0 {
		t.Errorf("ps -o json does not keep to ps.schema.json: %v %s", err, strings.Join(errs, "\n"))
	}
}

// ReapJSONEnv is reapJSON with env added to the reaper's.
func ReapJSONEnv(t *testing.T, env []string, args ...string) (*ReapReport, Result) {
	t.Helper()
	r := RunReaper(t, env, append([]string{"reap", "--output", "json", "--journal", "off", "--lock-file", filepath.Join(t.TempDir(), "lock")}, args...)...)
	var rep ReapReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("reap: exit %d, %v\nstdout %s\nstderr %s", r.Code, err, r.Stdout, r.Stderr)
	}
	return &rep, r
}
