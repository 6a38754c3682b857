package platform

import (
	"testing"
	"time"
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

// On a Windows table a variable's name is compared without case, as
// Windows does: the Path most processes carry is PATH, kept by a KeepEnv
// that names PATH and found by Getenv("PATH"). The control is a Unix
// table, where Path is another variable.
func TestWindowsEnvNamesFold(t *testing.T) {
	created := time.Unix(36000, 0)
	win := WindowsSnapshot([]WinProc{{PID: 300, PPID: 4, Created: created, Image: "node.exe",
		Env: []string{"Path=C:\\WINDOWS", "x=1"}}}, created.Add(time.Hour), created.Add(-time.Hour), nil)
	win.KeepEnv([]string{"PATH"})
	if v, ok := win.Getenv(win.Get(300), "PATH"); !ok || v != `C:\WINDOWS` {
		t.Errorf("Windows: Getenv(PATH) = %q, %v; want C:\\WINDOWS", v, ok)
	}
	if v, ok := win.Getenv(win.Get(300), "X"); !ok || v != "1" {
		t.Errorf("Windows: Getenv(X), a name KeepEnv did not keep, = %q, %v; want 1 (read again)", v, ok)
	}
	k := (&Snapshot{NoReparenting: true, keepEnv: map[string]bool{"PATH": true}}).newEnvKeeper()
	if kept := k.keep([]byte("Path=C:\\a\x00HOME=x\x00")); kept != "Path=C:\\a\x00" {
		t.Errorf("Windows: kept %q, want the Path entry", kept)
	}
	unix := &Snapshot{}
	unix.KeepEnv([]string{"PATH"})
	if kept := unix.newEnvKeeper().keep([]byte("Path=/a\x00")); kept != "" {
		t.Errorf("control, Unix: kept %q of Path for PATH, want nothing", kept)
	}
	if _, ok := unix.lookupEnv("Path=/a\x00", "PATH"); ok {
		t.Error("control, Unix: Path answered for PATH")
	}
}
