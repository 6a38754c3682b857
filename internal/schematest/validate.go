package schematest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// Validate checks the JSON document doc against schema and returns every
// violation, each with its JSON path ("$.findings[0].uid: …").
func Validate(schema, doc []byte) ([]string, error) {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	d := json.NewDecoder(strings.NewReader(string(doc)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("document: %w", err)
	}
	c := &checker{root: s}
	c.check("$", s, v)
	return c.errs, c.bad
}

type checker struct {
	root map[string]any
	errs []string
	bad  error // the schema uses what this checker does not implement
}

// known are the keywords checked; the rest only describe.
var known = map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "minimum": true, "minLength": true, "pattern": true, "$ref": true}

var describe = map[string]bool{"$schema": true, "$id": true, "$defs": true, "title": true, "description": true, "format": true}

func (c *checker) fail(path, format string, args ...any) {
	c.errs = append(c.errs, path+": "+fmt.Sprintf(format, args...))
}

func (c *checker) check(path string, s map[string]any, v any) {
	for k := range s {
		if !known[k] && !describe[k] && c.bad == nil {
			c.bad = fmt.Errorf("schema keyword %q at %s is not implemented by schematest", k, path)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		defs, _ := c.root["$defs"].(map[string]any)
		def, _ := defs[name].(map[string]any)
		if !found || def == nil {
			c.bad = fmt.Errorf("unresolved $ref %q at %s", ref, path)
			return
		}
		c.check(path, def, v)
	}
	if t, ok := s["type"]; ok && !typeIs(t, v) {
		c.fail(path, "%s, want type %v", kindOf(v), t)
		return
	}
	if e, ok := s["enum"].([]any); ok && !contains(e, v) {
		c.fail(path, "%v is not one of %v", v, e)
	}
	if k, ok := s["const"]; ok && !equal(k, v) {
		c.fail(path, "%v, want %v", v, k)
	}
	if m, ok := s["minimum"].(float64); ok {
		if n, isNum := v.(json.Number); isNum {
			if f, _ := n.Float64(); f < m {
				c.fail(path, "%v below the minimum %v", n, m)
			}
		}
	}
	if m, ok := s["minLength"].(float64); ok {
		if str, isStr := v.(string); isStr && float64(len([]rune(str))) < m {
			c.fail(path, "%q shorter than %v", str, m)
		}
	}
	if p, ok := s["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			c.bad = fmt.Errorf("pattern %q at %s: %v", p, path, err)
		} else if str, isStr := v.(string); isStr && !re.MatchString(str) {
			c.fail(path, "%q does not match %q", str, p)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, there := v[r.(string)]; !there {
					c.fail(path, "%q is missing", r)
				}
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := path + "." + k
			if p, ok := props[k].(map[string]any); ok {
				c.check(sub, p, v[k])
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					c.fail(sub, "not in the schema")
				}
			case map[string]any:
				c.check(sub, ap, v[k])
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range v {
				c.check(fmt.Sprintf("%s[%d]", path, i), items, x)
			}
		}
	}
}

func typeIs(t any, v any) bool {
	switch t := t.(type) {
	case string:
		return isType(t, v)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && isType(s, v) {
				return true
			}
		}
	}
	return false
}

func isType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil || !strings.ContainsAny(n.String(), ".eE")
	}
	return false
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func contains(list []any, v any) bool {
	for _, x := range list {
		if equal(x, v) {
			return true
		}
	}
	return false
}

// equal compares a schema value (numbers as float64) with a document's
// (numbers as json.Number).
func equal(a, b any) bool {
	if n, ok := b.(json.Number); ok {
		f, err := n.Float64()
		return err == nil && reflect.DeepEqual(a, f)
	}
	return reflect.DeepEqual(a, b)
}
