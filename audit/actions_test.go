package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/orphanreaper/reaper/policy"
)

// Every schema that names a rule's action ("action": {"enum": …}) names
// exactly policy.Actions, in its order: the one list of actions. The
// report, explain and evidence schemas each name one. The control: an
// enum without one action is found out.
func TestSchemasNameEveryAction(t *testing.T) {
	want := make([]any, len(policy.Actions))
	for i, a := range policy.Actions {
		want[i] = string(a)
	}
	paths, _ := filepath.Glob("*.schema.json")
	named := map[string]int{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, enum := range actionEnums(doc) {
			named[path]++
			if !slices.Equal(enum, want) {
				t.Errorf("%s: an action's enum is %v, want policy.Actions %v", path, enum, want)
			}
		}
	}
	for _, path := range []string{"report.schema.json", "explain.schema.json", "evidence.schema.json"} {
		if named[path] == 0 {
			t.Errorf("%s names no action's enum", path)
		}
	}
	short := map[string]any{"properties": map[string]any{"action": map[string]any{"enum": want[:len(want)-1]}}}
	if got := actionEnums(short); len(got) != 1 || slices.Equal(got[0], want) {
		t.Errorf("control: an enum short of one action read as %v", got)
	}
}

// actionEnums finds every "action" property's enum in a JSON schema.
func actionEnums(doc any) [][]any {
	var out [][]any
	switch v := doc.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			if a, ok := props["action"].(map[string]any); ok {
				if enum, ok := a["enum"].([]any); ok {
					out = append(out, enum)
				}
			}
		}
		for _, c := range v {
			out = append(out, actionEnums(c)...)
		}
	case []any:
		for _, c := range v {
			out = append(out, actionEnums(c)...)
		}
	}
	return out
}
