package scan

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// endedCounter is a client's adviser: it counts the session-ended
// findings, which exist only once the ledgers were applied.
type endedCounter struct{}

func (endedCounter) Advise(r *Result, _ Sampler) []Advice {
	n := 0
	for _, f := range r.Findings {
		if f.Has(SessionEnded) {
			n++
		}
	}
	return []Advice{{ID: "ended", Evidence: fmt.Sprint(n)}}
}

// Scan folds the evidence gather reads in its one order: the ledger's
// ended session makes the finding; advice, a phase of its own asked after
// (Result.Advise), counts it; not asked, the finding stands and there is
// no advice. gather is
// given the live owners the scan met (the gateway, an ancestor of the
// candidate), and its error ends the scan.
func TestScanWithEvidence(t *testing.T) {
	snap := func() *platform.Snapshot {
		return snapshot(
			p(200, 10, "openclaw-gateway", []string{"openclaw-gateway"}, nil, "/"),
			p(300, 200, "bash", []string{"bash", "-c", "sleep 600"}, nil, "/"),
		)
	}
	for _, advise := range []bool{true, false} {
		var met []int
		r, err := Scan(snap(), testConfig, func(owners, _ []*platform.Process) (Evidence, error) {
			for _, o := range owners {
				met = append(met, o.PID)
			}
			l := gwLedger(200, id(200), []ledger.Session{{Key: "s", State: ledger.SessionClosed}}, run("exec:x", 300, id(300), ledger.RunRunning, "s"))
			return Evidence{Ledgers: []*ledger.Ledger{l}, Advisers: []Adviser{endedCounter{}}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if advise {
			r.Advise([]Adviser{endedCounter{}}, nil)
		}
		if !reflect.DeepEqual(met, []int{200}) {
			t.Errorf("gather was given the live owners %v, want [200]", met)
		}
		if len(r.Findings) != 1 || !r.Findings[0].Has(SessionEnded) {
			t.Errorf("advise %v: findings %+v", advise, r.Findings)
		}
		if got := len(r.Advice) == 1 && r.Advice[0].ID == "ended" && r.Advice[0].Evidence == "1"; got != advise {
			t.Errorf("advise %v: advice %+v", advise, r.Advice)
		}
	}
	// Control: without the evidence, the tree under the live gateway is no
	// finding at all.
	if r, _ := Scan(snap(), testConfig, nil); len(r.Findings) != 0 {
		t.Errorf("without evidence: findings %+v", r.Findings)
	}
	bad := errors.New("a named ledger that does not parse")
	if r, err := Scan(snap(), testConfig, func(_, _ []*platform.Process) (Evidence, error) { return Evidence{}, bad }); r != nil || !errors.Is(err, bad) {
		t.Errorf("a gather error: result %v, error %v", r, err)
	}
}
