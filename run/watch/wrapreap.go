package watch

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// reapAdopted reaps the trees this process adopted — children that are
// not its own — as a reap does, with one rule: terminate, at any age.
// What a live owner's evidence owns and what [[protect]] names are spared
// by the same gate as every reap's; a tree whose [[owner]] marker or unit
// names an owner that lives is that owner's, not the command's, and is
// left too.
func (w *Wrap) reapAdopted(parent context.Context, adopted func(*platform.Process) bool) error {
	base := w.Policy
	pol := *base
	pol.Defaults.MinAge = 0
	self, err := regexp.Compile("^" + regexp.QuoteMeta(strings.Join(os.Args, " ")) + "$")
	if err != nil {
		return err
	}
	pol.Subreapers = append(append([]policy.Subreaper{}, base.Subreapers...), policy.Subreaper{Subreaper: scan.Subreaper{Cmdline: self}})
	builtin := "reaper run reaps its own user's leftovers only: 'reaper reap' or the watch, with a rule whose user list takes in that user, reaps this one"
	if os.Getpid() == 1 {
		builtin = "reaper run reaps its own user's leftovers only; as this namespace's init it ends the rest as it exits"
	}
	pol.Rules = []policy.Rule{{Name: "run-leftover", Action: policy.Terminate, Builtin: builtin,
		When: []scan.Reason{scan.Reparented, scan.OwnerDead, scan.RunDone, scan.SessionEnded, scan.Untracked}}}
	timeout := run.DefaultTimeout(&pol)
	started := time.Now()
	ctx, cancel := context.WithDeadline(parent, started.Add(timeout))
	defer cancel()
	cfg := run.ReapConfig{Config: run.Config{Policy: &pol, Clients: run.ClientsOf(w.Clients, &pol), Discover: true, Timeout: timeout, ReadTable: run.ReadTable,
		Only: func(f *scan.Finding) bool {
			if !adopted(f.Root) {
				return false // not the command's: the host's, left to reap and watch
			}
			if ownerLives(f) {
				fmt.Fprintf(w.Stderr, "reaper run: left %d (%s): its %s, pid %d, is alive and may still use it\n",
					f.Root.PID, audit.Printable(f.Root.Comm), f.Owner, f.OwnerPID)
				return false
			}
			return true
		}},
		Started: started, Deadline: started.Add(timeout), LockFile: w.LockFile, LockWait: 30 * time.Second, LogRepeats: true,
		Records: run.Records{AuditLog: w.AuditLog, Journal: "off", Log: w.Log},
		// A container's init on a read-only image, with no /run or a
		// random uid's unwritable home: the reap goes on, said once. (Its
		// namespace's processes are no other reaper's there.)
		LockOptional: os.Getpid() == 1, NoLock: func(err error) {
			fmt.Fprintf(w.Stderr, "reaper run: no lock (%v): reaping without one\n", err)
		}}
	r, err := run.Reap(ctx, cfg)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Record(cfg, nil); err != nil {
		return err
	}
	if err := r.Report.WriteQuietAs(w.Stderr, "run"); err != nil {
		return err
	}
	for _, f := range r.Report.Findings {
		if f.Outcome == policy.Protected {
			fmt.Fprintf(w.Stderr, "reaper run: left %d: %s\n", f.RootPID, audit.Printable(f.Detail))
		}
	}
	if partial, permission := r.Failures(); partial+permission > 0 {
		return fmt.Errorf("%s of what the command left not reaped (see the lines above)", audit.Plural(partial+permission, "tree"))
	}
	return nil
}

// ownerLives reports whether f's root carries an [[owner]]'s pid marker
// or sits in its unit, and that owner lives: the scan ties the owner and
// adds owner-dead when it is gone.
func ownerLives(f *scan.Finding) bool {
	return f.Owner != "" && !slices.Contains(f.Reasons, scan.OwnerDead)
}
