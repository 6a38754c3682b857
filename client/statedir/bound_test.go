package statedir

import (
	"encoding/json"
	"strings"
	"testing"
)

// A read whose any string — however deep, in a map key or a byte slice —
// is longer than MaxValue is not used; the control, every string within
// the bound, is.
func TestDecodeBoundsValues(t *testing.T) {
	type raw struct {
		Head
		Items []map[string][]string `json:"items"`
		Blob  json.RawMessage       `json:"blob,omitempty"`
	}
	long := strings.Repeat("y", MaxValue+1)
	for _, tt := range []struct {
		name  string
		items []map[string][]string
		blob  string
		ok    bool
	}{
		{"control", []map[string][]string{{"k": {strings.Repeat("y", MaxValue)}}}, "", true},
		{"a deep value", []map[string][]string{{"k": {"a", long}}}, "", false},
		{"a map key", []map[string][]string{{long: nil}}, "", false},
		{"a raw message", nil, `"` + long + `"`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := raw{Head: Head{Dir: "/d", UID: 7}, Items: tt.items}
			if tt.blob != "" {
				in.Blob = json.RawMessage(tt.blob)
			}
			b, _ := json.Marshal(in)
			var out raw
			errs := Decode(b, &out, &out.Head, "/d", 7, "Test")
			if (errs == nil) != tt.ok {
				t.Errorf("errors %v, want ok %v", errs, tt.ok)
			}
			if !tt.ok && !strings.Contains(errs[0].Error(), "longer than 64 KiB") {
				t.Errorf("the error does not say why: %v", errs[0])
			}
		})
	}
}
