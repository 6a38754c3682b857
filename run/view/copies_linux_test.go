package view

import (
	"os"
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// Issue 64, item 13: reaper_server_copies_bytes summed RSS where ps shows
// PSS. A watch's copies are PSS, read for the copies' processes alone:
// here the test process stands for a copy under its parent's session, its
// RSS in the table made absurd so that a sum of RSS cannot pass.
func TestCopiesArePSS(t *testing.T) {
	s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	self := s.Get(os.Getpid())
	if self == nil {
		t.Fatal("the test process is not in the table")
	}
	want, err := s.PSS(self)
	if err != nil {
		t.Skipf("PSS cannot be read here: %v", err)
	}
	self.RSS = 1 << 40
	b := &psBuild{s: s, sessions: []audit.PSSession{{PID: os.Getppid(), Processes: []audit.PSProcess{
		{PID: os.Getppid(), Depth: 0, Kind: "client"}, {PID: os.Getpid(), Depth: 1, Kind: "mcp"}}}}}
	dups := []audit.ServerCopies{{PIDs: []int{os.Getpid()}, MemoryBytes: 1 << 40}}
	b.copiesPSS(dups)
	if got := dups[0].MemoryBytes; got == 1<<40 || got < want/2 || got > want*2 {
		t.Errorf("the copy's memory %d, want its PSS (%d read just before), not its RSS", got, want)
	}
}
