package platform

import (
	"testing"
	"unsafe"
)

// The keeper keeps only the named entries, and processes whose kept
// entries are the same share one copy; the control is a different value,
// which gets its own.
func TestEnvKeeperShares(t *testing.T) {
	s := &Snapshot{}
	s.KeepEnv([]string{"A", "C"})
	k := s.newEnvKeeper()
	one := k.keep([]byte("A=1\x00B=x\x00C=3\x00"))
	two := k.keep([]byte("B=y\x00A=1\x00C=3\x00"))
	other := k.keep([]byte("A=2\x00C=3\x00"))
	if one != "A=1\x00C=3\x00" || two != one || other != "A=2\x00C=3\x00" {
		t.Fatalf("kept %q, %q, %q", one, two, other)
	}
	if unsafe.StringData(one) != unsafe.StringData(two) {
		t.Error("the same kept entries are two copies, want one shared")
	}
	if unsafe.StringData(one) == unsafe.StringData(other) {
		t.Error("different kept entries share a copy")
	}
	// The scratch buffer is reused: what was returned must not change.
	k.keep([]byte("A=9\x00C=9\x00"))
	if one != "A=1\x00C=3\x00" || other != "A=2\x00C=3\x00" {
		t.Errorf("a later keep changed what was kept: %q, %q", one, other)
	}
	all := (&Snapshot{}).newEnvKeeper().keep([]byte("A=1\x00B=x\x00"))
	if all != "A=1\x00B=x\x00" {
		t.Errorf("without KeepEnv kept %q, want all of it", all)
	}
}
