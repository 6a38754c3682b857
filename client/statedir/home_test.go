package statedir

import (
	"path/filepath"
	"testing"
)

// A process's home is its HOME, else its USERPROFILE (a Windows
// process's, as Node's os.homedir reads it); a relative path names none.
func TestProcessHome(t *testing.T) {
	abs := func(s string) string { p, _ := filepath.Abs(s); return p }
	home, profile := abs("home"), abs("profile")
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"HOME", map[string]string{"HOME": home, "USERPROFILE": profile}, home},
		{"USERPROFILE, no HOME", map[string]string{"USERPROFILE": profile}, profile},
		{"a relative HOME: USERPROFILE", map[string]string{"HOME": "h", "USERPROFILE": profile}, profile},
		{"control: neither", map[string]string{"HOME": "h"}, ""},
	} {
		got, ok := ProcessHome(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: %q %v, want %q", tc.name, got, ok, tc.want)
		}
	}
}
