package scan

import (
	"reflect"
	"testing"
)

// Marks.Add merges every field: one entry in each of two marks' every
// field makes two in the sum. A field added to Marks and not to Add fails
// here, not in a user's run.
func TestMarksAddEveryField(t *testing.T) {
	var one Marks
	v := reflect.ValueOf(&one).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		f.Set(reflect.MakeSlice(f.Type(), 1, 1))
	}
	var sum Marks
	sum.Add(one)
	sum.Add(one)
	s := reflect.ValueOf(sum)
	for i := range s.NumField() {
		if n := s.Field(i).Len(); n != 2 {
			t.Errorf("Marks.%s: %d entries after adding two marks of one each, want 2", s.Type().Field(i).Name, n)
		}
	}
}
