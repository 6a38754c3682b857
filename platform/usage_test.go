package platform

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// The process's own usage is its own: it started before the test and not
// long before (a test binary runs for minutes at most), and on Linux and
// Windows its resident memory is read, never above its peak. A file it
// opens is counted among its descriptors (the control: the count moves
// with what the process holds).
func TestReadOwnUsage(t *testing.T) {
	before, err := ReadOwnUsage()
	if err != nil {
		t.Fatal(err)
	}
	if before.MaxFDs == 0 && runtime.GOOS != "windows" {
		t.Error("no RLIMIT_NOFILE read")
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "windows" {
		return // getrusage's CPU and peak: what the BSDs and macOS say
	}
	now := time.Now()
	if before.Start.After(now) || now.Sub(before.Start) > time.Hour {
		t.Errorf("started at %v, now %v: not this process's start", before.Start, now)
	}
	if before.RSS == 0 || before.PeakRSS < before.RSS {
		t.Errorf("RSS %d, peak %d: want 0 < RSS ≤ peak", before.RSS, before.PeakRSS)
	}
	if underWine() {
		// Wine 8 answers 0 private bytes and 0 handles (its
		// ProcessHandleCount is a stub): on Windows, the windows-latest
		// job holds the rest.
		t.Log("under wine: no private bytes or handle count to check")
		return
	}
	if before.Virtual < before.RSS {
		t.Errorf("virtual %d below RSS %d", before.Virtual, before.RSS)
	}
	var held []*os.File
	for range 8 {
		f, err := os.Open(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, f)
	}
	after, err := ReadOwnUsage()
	for _, f := range held {
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	if after.OpenFDs < before.OpenFDs+len(held) {
		t.Errorf("%d open before, %d after opening %d more", before.OpenFDs, after.OpenFDs, len(held))
	}
}
