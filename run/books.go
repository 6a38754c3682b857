package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/kill"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/reap"
)

// books are what a reap keeps beside its lock: what a reap that died
// left stopped or confined (given back before the table is read), the
// kills a respawn is told by (respawns), and this reap's own stop record
// (StopLog) — with what could not be kept, for the report's warnings.
type books struct {
	lock     string
	dryRun   bool
	loops    respawns
	stops    *StopLog
	warnings []string
}

// openBooks gives back what a reap that died left stopped or confined,
// removes the empty confinements any reaper that died left, whatever its
// lock (kill.SweepConfinements; not in a dry run), and reads the kills
// remembered.
func openBooks(lockFile string, dryRun bool) *books {
	b := &books{lock: lockFile, dryRun: dryRun, warnings: recoverStopped(paths.BesideLock(lockFile).Stopped)}
	if !dryRun {
		if swept := kill.SweepConfinements(time.Now()); len(swept) > 0 {
			b.warnings = append(b.warnings, fmt.Sprintf("removed %s that reapers which died left: %s", audit.Plural(len(swept), "empty confinement"), strings.Join(swept, ", ")))
		}
	}
	b.loops = loadRespawns(paths.BesideLock(lockFile).Respawns, time.Now())
	return b
}

// journal is the stop record a reap that acts writes as it goes (nil for
// one that acts on nothing). Without it the reap still acts — the record
// matters only should this process die mid-reap, and an orphan left is
// worse — and the report says so.
func (b *books) journal(plan *policy.Plan) reap.Journal {
	if b.dryRun || !plannedAny(plan) {
		return nil
	}
	stops, err := openStopLog(paths.BesideLock(b.lock).Stopped)
	if err != nil {
		b.warnings = append(b.warnings, err.Error()+": should this reap die mid-way, what it stopped is not continued by the next")
		return nil
	}
	b.stops = stops
	return stops
}

// close ends the stop record (the reap is done: nothing is left stopped)
// and remembers the kills made from acting to now, for respawns.
func (b *books) close(plan *policy.Plan, results []reap.Result, s *platform.Snapshot, acting time.Time) {
	if b.stops != nil {
		b.stops.done()
	}
	if b.dryRun {
		return
	}
	if err := b.loops.record(paths.BesideLock(b.lock).Respawns, plan, results, s, acting, time.Now()); err != nil {
		b.warnings = append(b.warnings, fmt.Sprintf("the record of respawns: %v: not saved, so a kill loop is told a cycle later", err))
	}
}
