//go:build unix

// FIFOs are Unix's: Windows keeps no named pipe in a directory.

package claudecode

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client/clienttest"
)

// TestFIFOsDoNotBlock: a FIFO where the sessions dir or a server's log dir
// should be fails at once; the read neither blocks nor follows it.
func TestFIFOsDoNotBlock(t *testing.T) {
	h := superHome(t, "v2", "710 Starting connection")
	logs, _ := filepath.Glob(filepath.Join(h, cacheRel(), "*"))
	if len(logs) != 1 {
		t.Fatalf("log dirs %v", logs)
	}
	if err := clienttest.Mkfifo(filepath.Join(logs[0], "mcp-logs-fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Raw, 1)
	go func() { done <- ReadRaw(filepath.Join(h, ".claude")) }()
	select {
	case raw := <-done:
		if len(raw.MCP) != 1 || len(raw.MCP[0].Logs) != 1 {
			t.Errorf("MCP %+v; want edited's log alone", raw.MCP)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadRaw blocked on a FIFO in the log dir")
	}
	sessions := filepath.Join(h, ".claude", "sessions")
	os.RemoveAll(sessions)
	if err := clienttest.Mkfifo(sessions, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() { done <- ReadRaw(filepath.Join(h, ".claude")) }()
	select {
	case raw := <-done:
		if len(raw.Problems) == 0 {
			t.Errorf("a FIFO for sessions/: no problem said")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadRaw blocked on a FIFO for sessions/")
	}
}
