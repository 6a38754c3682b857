package audit

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/orphanreaper/reaper/policy"
)

// The outcomes the schemas allow are the code's one list
// (policy.Outcomes): a new outcome — interrupted — added to the code and
// not to a schema fails here; history's filter and help read the list.
func TestSchemasListEveryOutcome(t *testing.T) {
	var want []string
	for _, o := range policy.Outcomes {
		want = append(want, string(o))
	}
	slices.Sort(want)
	for _, name := range []string{"report.schema.json", "evidence.schema.json", "explain.schema.json"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		found := false
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				if o, ok := v["outcome"].(map[string]any); ok {
					if enum, ok := o["enum"].([]any); ok {
						found = true
						var got []string
						for _, e := range enum {
							got = append(got, e.(string))
						}
						slices.Sort(got)
						if !slices.Equal(got, want) {
							t.Errorf("%s: outcome enum %v, the code's %v", name, got, want)
						}
					}
				}
				for _, x := range v {
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(doc)
		if !found {
			t.Errorf("%s: no outcome enum", name)
		}
	}
}
