//go:build linux || windows

package watch

import (
	"testing"
	"time"
)

// quietDirs fails if d tells a change within 200 ms.
func quietDirs(t *testing.T, d *Dirs, why string) {
	t.Helper()
	select {
	case got := <-d.C():
		t.Fatalf("%s: told %+v", why, got)
	case <-time.After(200 * time.Millisecond):
	}
}

// toldDir waits for d's next change, which must be of want's dir naming
// the entry name.
func toldDir(t *testing.T, d *Dirs, want Dir, name, why string) {
	t.Helper()
	want.Name = name
	select {
	case got := <-d.C():
		if got != want {
			t.Errorf("%s: told %+v, want %+v", why, got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not told", why)
	}
}
