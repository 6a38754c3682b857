package run

import (
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// activityWindow is how long CPU and I/O are watched on trees whose run is
// marked done, to tell a zombie session that keeps working from an idle
// leftover. Only such trees pay it.
const activityWindow = 500 * time.Millisecond

// inspection is what inspect found, for the report's facts (reap
// inspects before it acts).
type inspection struct {
	holds    map[*platform.Process][]platform.PTYHold
	states   []scan.PTYState
	activity map[int]*audit.Activity
	pss      map[int]uint64 // member pid → PSS, where read
}

// inspect reads what the findings hold — their pseudo-terminals — and,
// for run-done findings, whether they kept working after the run's end.
// It reads files only for findings' processes: the scan's cost for the
// rest of the table does not change.
func inspect(t *Table, plan *policy.Plan) *inspection {
	s := t.Snap
	holds := map[*platform.Process][]platform.PTYHold{}
	member := map[int]bool{}
	pss := map[int]uint64{}
	for _, it := range plan.Items {
		for _, m := range it.Finding.Members {
			member[m.Proc.PID] = true
			if h, err := s.PTYHolds(m.Proc); err == nil && len(h) > 0 {
				holds[m.Proc] = h
			}
			if v, err := s.PSS(m.Proc); err == nil {
				pss[m.Proc.PID] = v
			}
		}
	}
	in := &inspection{holds: holds, activity: map[int]*audit.Activity{}, pss: pss,
		states: scan.PTYStates(holds, scan.FindingsOnly, func(pid int) bool { return member[pid] })}

	var done []*scan.Finding
	for _, it := range plan.Items {
		if f := it.Finding; f.Has(scan.RunDone) && f.Run != nil && f.Run.EndedAt != nil {
			done = append(done, f)
		}
	}
	if len(done) == 0 {
		return in
	}
	first := map[int]platform.Sample{}
	for _, f := range done {
		for _, m := range f.Members {
			if smp, err := s.SampleProcess(m.Proc); err == nil {
				first[m.Proc.PID] = smp
			}
		}
	}
	time.Sleep(activityWindow)
	for _, f := range done {
		in.activity[f.Root.PID] = activityOf(s, f, first)
	}
	return in
}

// activityOf sums the evidence that f's tree worked after its run ended:
// processes started since, CPU and bytes written during the window, and
// the terminal written after the end.
func activityOf(s *platform.Snapshot, f *scan.Finding, first map[int]platform.Sample) *audit.Activity {
	ended := *f.Run.EndedAt
	a := &audit.Activity{EndedAt: ended.UTC(), SampleMillis: activityWindow.Milliseconds()}
	for _, m := range f.Members {
		if s.Taken.Add(-s.Age(m.Proc)).After(ended) {
			a.StartedSinceDone++
		}
		before, ok := first[m.Proc.PID]
		after, err := s.SampleProcess(m.Proc)
		if !ok || err != nil {
			continue
		}
		a.CPUTicks += after.CPUTicks
		a.CPUTicksDelta += after.CPUTicks - before.CPUTicks
		if before.IOKnown && after.IOKnown {
			a.WrittenDelta += after.IO.WChar - before.IO.WChar
		}
		if w := after.TTYWritten; w.After(ended) && (a.TTYWrittenAt == nil || w.After(*a.TTYWrittenAt)) {
			t := w.UTC()
			a.TTYWrittenAt = &t
		}
	}
	if a.StartedSinceDone > 0 {
		a.Evidence = append(a.Evidence, audit.Plural(a.StartedSinceDone, "process")+" started after the run ended")
	}
	if a.CPUTicksDelta > 0 {
		a.Evidence = append(a.Evidence, fmt.Sprintf("%d ticks of CPU in %d ms", a.CPUTicksDelta, a.SampleMillis))
	}
	if a.WrittenDelta > 0 {
		a.Evidence = append(a.Evidence, fmt.Sprintf("%d bytes written in %d ms", a.WrittenDelta, a.SampleMillis))
	}
	if a.TTYWrittenAt != nil {
		a.Evidence = append(a.Evidence, "its terminal was written at "+a.TTYWrittenAt.Format(time.RFC3339)+", after the end")
	}
	a.ActiveAfterDone = len(a.Evidence) > 0
	return a
}
