package all

import (
	"reflect"
	"testing"
)

// The set's marks gather every field of every client's marks: a field
// left out of the merge once left the leader marks of four clients unused
// by the binary, while each adapter's own tests passed.
func TestMarksGathersEveryClients(t *testing.T) {
	m := Clients.Marks()
	v := reflect.ValueOf(m)
	for i := 0; i < v.NumField(); i++ {
		want := 0
		for _, c := range Clients.All() {
			info := c.Info()
			want += reflect.ValueOf(info.AllMarks()).Field(i).Len()
		}
		if got := v.Field(i).Len(); got != want || want == 0 {
			t.Errorf("Marks().%s: %d entries, the clients declare %d", v.Type().Field(i).Name, got, want)
		}
	}
}
