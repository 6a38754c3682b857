package statedir

import (
	"fmt"
	"reflect"
)

// What a reader returns is bounded field by field, as OpenClaw's values
// are (commands cut at 4 KiB, values at 64 KiB): every string of a user's
// state is that user's to make as long as their disk allows, and each
// string the parent keeps reaches the evidence, the report and the audit
// log. 120 session files with 118 KiB session ids once took root's run
// from 0.25 s to 6.4 s, its peak from 10 to 155 MB, and every report to
// 14 MB.
const (
	// MaxID bounds an identifier a client writes: a session id, a role, a
	// start time, a pid namespace's name. Real ones are tens of bytes (a
	// UUID is 36).
	MaxID = 256
	// MaxValue bounds any string of a read the parent decodes: a path is
	// at most PATH_MAX (4 KiB); OpenClaw's longest value is 64 KiB.
	MaxValue = 64 << 10
)

// CheckID says why id, the field named field, is not an identifier a
// client writes, or "": empty is allowed (the caller says whether it must
// be there).
func CheckID(field, id string) string {
	if len(id) > MaxID {
		return fmt.Sprintf("%s is %d bytes, longer than any a client writes (%d)", field, len(id), MaxID)
	}
	return ""
}

// checkValues returns an error when a string (or byte slice) anywhere in
// v is longer than MaxValue: the read is not used, its owner's doubt.
func checkValues(v any) error {
	if n := longest(reflect.ValueOf(v), 0); n > MaxValue {
		return fmt.Errorf("a value of %d bytes, longer than %d KiB: not used", n, MaxValue>>10)
	}
	return nil
}

// longest is the length of the longest string or byte slice in v, walked
// to a bounded depth (reads are plain data a few levels deep).
func longest(v reflect.Value, depth int) int {
	if depth > 16 {
		return 0
	}
	n := 0
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			n = longest(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n = max(n, longest(v.Field(i), depth+1))
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return v.Len()
		}
		for i := range v.Len() {
			n = max(n, longest(v.Index(i), depth+1))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			n = max(n, longest(it.Key(), depth+1), longest(it.Value(), depth+1))
		}
	}
	return n
}
