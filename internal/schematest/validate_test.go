package schematest

import (
	"strings"
	"testing"
)

const schema = `{"type": "object", "required": ["a", "b"], "additionalProperties": false,
  "properties": {"a": {"type": "integer", "minimum": -1}, "b": {"type": "array", "items": {"$ref": "#/$defs/x"}}, "c": {"enum": ["p", "q"]}},
  "$defs": {"x": {"type": "object", "required": ["k"], "properties": {"k": {"const": 1}}}}}`

// Each violation is found, with its path; the control: a document that
// keeps every rule has none.
func TestValidate(t *testing.T) {
	errs, err := Validate([]byte(schema), []byte(`{"a": 3, "b": [{"k": 1}], "c": "p"}`))
	if err != nil || len(errs) != 0 {
		t.Fatalf("control: %v %v", errs, err)
	}
	errs, err = Validate([]byte(schema), []byte(`{"a": -2.5, "b": [{"k": 2}, {}], "c": "r", "d": true}`))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(errs, "\n")
	for _, want := range []string{"$.a: a number, want type integer", "$.b[0].k: 2, want 1", `$.b[1]: "k" is missing`, "$.c: r is not one of [p q]", "$.d: not in the schema"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if _, err := Validate([]byte(`{"oneOf": [{"type": "string"}]}`), []byte(`"y"`)); err == nil {
		t.Error("a keyword it does not check passed as checked")
	}
}
