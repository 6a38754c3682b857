package doctor

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
)

// Every check Diagnose runs is in Checks, in Checks' order: the help
// cannot leave one out or list them out of order.
func TestChecksListed(t *testing.T) {
	d, err := Diagnose(context.Background(), Config{Clients: client.NewSet(), Timeout: time.Minute,
		LockFile: filepath.Join(t.TempDir(), "reaper.lock")})
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for _, c := range d.Checks {
		for next < len(Checks) && Checks[next].Name != c.Name {
			next++
		}
		if next == len(Checks) {
			t.Fatalf("check %q is not in Checks, or out of its order", c.Name)
		}
	}
	if len(d.Checks) < 10 {
		t.Errorf("%d checks ran: the test held little", len(d.Checks))
	}
}
