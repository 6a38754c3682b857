package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/schematest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// Every JSON document reaper prints keeps to the schema shipped for it
// (audit/*.schema.json): version, doctor, pty, explain (a finding, PID 1)
// and history, each as the binary prints it. The schemas admit no field
// they do not name. The controls: a document with a field its schema does
// not name, and one with a status it does not know, fail.
func TestJSONSchemas(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	if runtime.GOOS != "linux" {
		skips.Skip(t, "--proc fixtures are Linux only")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	fixture := []string{"--proc", "../../testdata/proc", "--policy", "../../testdata/policy/fixture.toml"}
	if r := clitest.RunReaper(t, nil, append([]string{"scan", "--audit-log", log, "-o", "json"}, fixture...)...); r.Code != 0 {
		t.Fatalf("scan for the audit log: exit %d\n%s", r.Code, r.Stderr)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "CLAUDE_CONFIG_DIR="}
	docs := map[string][][]string{
		"version": {{"version", "-o", "json"}},
		"doctor":  {{"doctor", "-o", "json", "--lock-file", filepath.Join(dir, "reaper.lock")}},
		"pty":     {{"pty", "-o", "json"}},
		"ps":      {{"ps", "-o", "json"}},
		"explain": {append([]string{"explain", "400", "-o", "json"}, fixture...), append([]string{"explain", "1", "-o", "json"}, fixture...)},
		"history": {{"history", "--audit-log", log, "--signals", "-o", "json"}},
	}
	for name, runs := range docs {
		schema, err := os.ReadFile("../../audit/" + name + ".schema.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range runs {
			r := clitest.RunReaper(t, env, args...)
			if r.Stdout == "" {
				t.Fatalf("%v: no output (exit %d)\n%s", args, r.Code, r.Stderr)
			}
			errs, err := schematest.Validate(schema, []byte(r.Stdout))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(errs) > 0 {
				t.Errorf("%v does not keep to %s.schema.json:\n%s", args, name, strings.Join(errs, "\n"))
			}
			// The control: a field the schema does not name.
			var doc map[string]any
			json.Unmarshal([]byte(r.Stdout), &doc)
			doc["not_in_the_schema"] = true
			bad, _ := json.Marshal(doc)
			if errs, _ := schematest.Validate(schema, bad); len(errs) == 0 {
				t.Errorf("%s: a field the schema does not name passed", name)
			}
		}
	}
	schema, _ := os.ReadFile("../../audit/doctor.schema.json")
	if errs, _ := schematest.Validate(schema, []byte(`{"schema_version": 1, "version": "x", "platform": "linux/amd64", "uid": 0, "user": "root",
		"checks": [{"name": "lock", "status": "fine", "summary": "x"}]}`)); len(errs) == 0 {
		t.Error("a status doctor does not have passed")
	}
}

// explain's finding is the report's: the definitions explain.schema.json
// copies from report.schema.json are the same.
func TestExplainSchemaCopiesTheReports(t *testing.T) {
	t.Parallel() // fixtures and the binary alone: nothing of the host
	defs := func(path string) map[string]any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Defs map[string]any `json:"$defs"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s.Defs
	}
	report, explain := defs("../../audit/report.schema.json"), defs("../../audit/explain.schema.json")
	for _, name := range []string{"Finding", "Member", "Activity", "PTYRef"} {
		if !reflect.DeepEqual(report[name], explain[name]) {
			t.Errorf("$defs %s differs between report.schema.json and explain.schema.json", name)
		}
	}
}
