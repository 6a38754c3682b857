package notify

import (
	"testing"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/internal/hostile"
)

// TestDBusSink: the one hostile set (audit's TestSinks runs it through
// the other sinks) in every string a notification carries — a finding's
// command line, owner, run and user, a storm's title — leaves in no
// D-Bus string raw, unbounded or with a secret.
func TestDBusSink(t *testing.T) {
	for _, h := range hostile.Strings {
		t.Run(h.Name, func(t *testing.T) {
			d := &desk{}
			n := &Notifier{Desktop: d}
			f := killed(7, h.S, h.S, 10)
			f.Cmdline, f.User = h.S, h.S
			if _, err := n.Pass(&audit.Report{Findings: []audit.Finding{f}}); err != nil {
				t.Fatal(err)
			}
			if err := n.Storm(audit.Storm{PID: 3, Comm: h.S, Command: h.S, User: h.S, Rate: 50}); err != nil {
				t.Fatal(err)
			}
			if len(d.sent) != 2 {
				t.Fatalf("%d notifications, want 2", len(d.sent))
			}
			for _, m := range d.sent {
				hostile.Check(t, "D-Bus summary", m[0], 2<<10)
				hostile.Check(t, "D-Bus body", m[1], 2<<10)
			}
		})
	}
}
