package ledger

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/schematest"
)

// specExample is the ledger of the format's first definition, verbatim.
const specExample = `{
  "version": 1,
  "owner": {
    "name": "openclaw-gateway",
    "pid": 4242,
    "start": "6a1f0c2e-3b7d-4c1e-9f00-0123456789ab:123456",
    "instance": "0b5e3a9c-run-of-this-owner"
  },
  "sessions": [
    {"key": "agent:main:main", "state": "active"},
    {"key": "agent:codex:acp:1", "parent": "agent:main:main", "state": "reset"}
  ],
  "runs": [
    {
      "id": "run-1", "kind": "pty", "pid": 1234, "pgid": 1234,
      "start": "6a1f0c2e-3b7d-4c1e-9f00-0123456789ab:123470",
      "session": "agent:main:main", "scope": "exec:main", "backend": "pty",
      "command": "bash -lc 'npm test'", "state": "running",
      "started_at": "2026-11-21T09:18:47Z"
    }
  ]
}
`

func TestParseSpecExample(t *testing.T) {
	l, err := Parse("spec.json", []byte(specExample))
	if err != nil {
		t.Fatal(err)
	}
	if l.Owner.Name != "openclaw-gateway" || l.Owner.PID != 4242 || l.Owner.Instance != "0b5e3a9c-run-of-this-owner" {
		t.Errorf("owner %+v", l.Owner)
	}
	r := l.Run("run-1")
	if r == nil || r.PID != 1234 || r.Kind != "pty" || r.State != RunRunning || r.Line != 14 ||
		r.StartedAt == nil || !r.StartedAt.Equal(time.Date(2026, 11, 21, 9, 18, 47, 0, time.UTC)) {
		t.Fatalf("run %+v", r)
	}
	if s := l.EndedSession("agent:codex:acp:1"); s == nil || s.Key != "agent:codex:acp:1" {
		t.Errorf("EndedSession(child) = %+v", s)
	}
	if s := l.EndedSession("agent:main:main"); s != nil {
		t.Errorf("EndedSession(active) = %+v", s)
	}
}

func TestEndedSessionAncestry(t *testing.T) {
	l := &Ledger{Sessions: []Session{
		{Key: "root", State: SessionClosed},
		{Key: "mid", Parent: "root", State: SessionActive},
		{Key: "leaf", Parent: "mid", State: SessionActive},
		{Key: "a", Parent: "b", State: SessionActive},
		{Key: "b", Parent: "a", State: SessionActive},
		{Key: "orphan", Parent: "missing", State: SessionActive},
	}}
	if s := l.EndedSession("leaf"); s == nil || s.Key != "root" {
		t.Errorf("leaf: %+v, want root", s)
	}
	if s := l.EndedSession("a"); s != nil {
		t.Errorf("cycle: %+v", s)
	}
	if s := l.EndedSession("orphan"); s != nil {
		t.Errorf("dangling parent: %+v", s)
	}
	if s := l.EndedSession(""); s != nil {
		t.Errorf("no session: %+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	owner := `"owner": {"name": "gw", "pid": 7}`
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"empty", ``, "1: truncated"},
		{"not an object", `[1, 2]`, `1: want "{"`},
		{"syntax", "{\n  \"version\": 1,\n  \"owner\": {,}\n}", "3: not valid JSON"},
		{"truncated", "{\n  \"version\": 1,\n  " + owner + ",\n  \"runs\": [\n    {\"id\": \"r\"", "5: truncated"},
		{"no version", `{` + owner + `}`, `1: no "version"`},
		{"version 2", "{\n\"version\": 2, " + owner + "}", "2: unsupported ledger version 2"},
		{"version string", `{"version": "1", ` + owner + `}`, "1: value: a JSON string where an int is wanted"},
		{"no owner", `{"version": 1}`, `1: no "owner"`},
		{"owner without name", `{"version": 1, "owner": {"pid": 3}}`, "1: owner has no name"},
		{"owner pid 0", `{"version": 1, "owner": {"name": "gw", "pid": 0}}`, "1: owner pid 0"},
		{"pid as string", "{\"version\": 1, " + owner + ",\n\"runs\": [\n{\"id\": \"r\", \"pid\": \"12\", \"state\": \"running\"}]}", "3: pid: a JSON string where an int is wanted"},
		{"bad run state", "{\"version\": 1, " + owner + ",\n\"runs\": [\n{\"id\": \"a\", \"pid\": 1, \"state\": \"running\"},\n{\"id\": \"b\", \"pid\": 2, \"state\": \"zombie\"}]}", `4: run "b": state "zombie"`},
		{"run without state", "{\"version\": 1, " + owner + ",\n\"runs\": [{\"id\": \"a\", \"pid\": 1}]}", `2: run "a": state ""`},
		{"bad kind", `{"version": 1, ` + owner + `, "runs": [{"id": "a", "pid": 1, "state": "done", "kind": "lsp"}]}`, `1: run "a": kind "lsp"`},
		{"duplicate run", "{\"version\": 1, " + owner + ", \"runs\": [\n{\"id\": \"a\", \"pid\": 1, \"state\": \"done\"},\n{\"id\": \"a\", \"pid\": 2, \"state\": \"done\"}]}", `3: run "a" appears twice`},
		{"negative pid", `{"version": 1, ` + owner + `, "runs": [{"id": "a", "pid": -4, "state": "done"}]}`, "*: negative pid"},
		{"bad session state", "{\"version\": 1, " + owner + ",\n\"sessions\": [{\"key\": \"k\", \"state\": \"gone\"}]}", `2: session "k": state "gone"`},
		{"session without key", `{"version": 1, ` + owner + `, "sessions": [{"state": "active"}]}`, "*: session without a key"},
		{"runs not a list", `{"version": 1, ` + owner + `, "runs": {}}`, `*: want "["`},
		{"trailing data", `{"version": 1, ` + owner + `} {}`, "*: data after the ledger object"},
		{"bad timestamp", `{"version": 1, ` + owner + `, "runs": [{"id": "a", "pid": 1, "state": "done", "started_at": "yesterday"}]}`, "1: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("l.json", []byte(tt.doc))
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *ledger.Error", err)
			}
			// want is "LINE: substring", or "*: substring" where any line will do.
			line, sub, _ := strings.Cut(tt.want, ": ")
			got := err.Error()
			if !strings.Contains(got, sub) || line != "*" && !strings.HasPrefix(got, "l.json:"+line+": ") {
				t.Errorf("error %q, want l.json:%s: …%s…", got, line, sub)
			}
		})
	}
}

func TestUnknownFieldsIgnored(t *testing.T) {
	doc := `{"version": 1, "future": {"x": [1, 2]}, "owner": {"name": "gw", "pid": 7, "extra": true},
		"runs": [{"id": "a", "pid": 1, "state": "running", "cgroup": "/x"}]}`
	l, err := Parse("l.json", []byte(doc))
	if err != nil || len(l.Runs) != 1 {
		t.Fatalf("%v %+v", err, l)
	}
}

func TestNullListsAreEmpty(t *testing.T) {
	l, err := Parse("l.json", []byte(`{"version": 1, "owner": {"name": "gw", "pid": 7}, "sessions": null, "runs": null}`))
	if err != nil || len(l.Runs) != 0 || len(l.Sessions) != 0 {
		t.Fatalf("%v %+v", err, l)
	}
	path := filepath.Join(t.TempDir(), "l.json")
	if err := WriteFile(path, &Ledger{Owner: Owner{Name: "gw", PID: 7}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"runs": []`) {
		t.Errorf("written: %s", b)
	}
}

func TestReadFileLimits(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, make([]byte, MaxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(huge); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge file: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.json")
	w, err := NewWriter(path, Owner{Name: "gw", PID: 42, Start: "boot:1", Instance: "i-1"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := "run-" + string(rune('a'+i))
			if err := w.StartRun(Run{ID: id, Kind: "mcp", PID: 100 + i, Start: "boot:9", Session: "s"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := w.SetSession(Session{Key: "s", State: SessionReset}); err != nil {
		t.Fatal(err)
	}
	if err := w.EndRun("run-a", time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := w.RemoveRun("run-b"); err != nil {
		t.Fatal(err)
	}
	l, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Runs) != 19 || l.Run("run-b") != nil || l.Run("run-a").State != RunDone || l.Run("run-a").EndedAt == nil {
		t.Errorf("runs after updates: %+v", l.Runs)
	}
	if l.Run("run-c").State != RunRunning || l.EndedSession("s") == nil {
		t.Errorf("state: %+v, sessions %+v", l.Run("run-c"), l.Sessions)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("temp files left: %v", ents)
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 { // Windows keeps no Unix modes
		t.Errorf("mode %v", fi.Mode())
	}
}

// The schema and the code must agree on the enumerations.
func TestSchemaMatchesCode(t *testing.T) {
	b, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Version  struct{ Const int } `json:"version"`
			Sessions struct {
				Items struct {
					Properties struct {
						State struct{ Enum []string } `json:"state"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"sessions"`
			Runs struct {
				Items struct {
					Properties struct {
						Kind  struct{ Enum []string } `json:"kind"`
						State struct{ Enum []string } `json:"state"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"runs"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	p := schema.Properties
	if p.Version.Const != Version {
		t.Errorf("schema version %d", p.Version.Const)
	}
	var kinds []string
	for _, k := range Kinds {
		kinds = append(kinds, string(k))
	}
	if got := p.Runs.Items.Properties.Kind.Enum; !reflect.DeepEqual(got, kinds) {
		t.Errorf("schema kinds %v, code %v", got, Kinds)
	}
	if got := p.Runs.Items.Properties.State.Enum; !slices.Equal(got, []string{string(RunRunning), string(RunDone)}) {
		t.Errorf("schema run states %v", got)
	}
	if got := p.Sessions.Items.Properties.State.Enum; !slices.Equal(got, []string{string(SessionActive), string(SessionReset), string(SessionClosed)}) {
		t.Errorf("schema session states %v", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(specExample))
	f.Add([]byte(`{"version": 1, "owner": {"name": "g", "pid": 1}, "runs": [{"id": "a", "pid": 1, "state": "done"}]}`))
	f.Add([]byte(`{"version": 1, "owner": {"name": "g", "pid": 1}, "runs": [{"id": "a", "pid": 1e99}]}`))
	f.Add([]byte(`{"version":1,"owner":{"name":"g","pid":1},"sessions":[{"key":"k","state":"reset","parent":"k"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Parse("fuzz.json", b)
		if err != nil {
			var le *Error
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *ledger.Error", err)
			}
			return
		}
		if l.Version != Version || l.Owner.PID <= 0 || l.Owner.Name == "" {
			t.Fatalf("accepted %+v", l)
		}
		for _, r := range l.Runs {
			l.EndedSession(r.Session) // must terminate
			if r.ID == "" || (r.State != RunRunning && r.State != RunDone) {
				t.Fatalf("accepted run %+v", r)
			}
		}
	})
}

// The fixture ledger keeps to the schema, and the invalid one does not
// (the control).
func TestFixtureAgainstSchema(t *testing.T) {
	schema, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	for file, ok := range map[string]bool{"../testdata/ledger/fixture.json": true, "../testdata/ledger/invalid.json": false} {
		doc, _ := os.ReadFile(file)
		errs, err := schematest.Validate(schema, doc)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if (len(errs) == 0) != ok {
			t.Errorf("%s: %v, want valid %v", file, errs, ok)
		}
	}
}
