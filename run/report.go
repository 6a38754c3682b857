package run

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
)

// Records are the traces a run leaves besides its report: the audit log,
// journald and the metrics file.
type Records struct {
	// AuditLog and Metrics are files ("": none).
	AuditLog, Metrics string
	// Journal is when journald gets records: "auto" (a reap's, when
	// journald is there), "on" (every mode) or "off".
	Journal string
	// Log takes the warnings of what is best effort (nil: none).
	Log *slog.Logger
	// Watch is what a watch adds to the metrics (nil: none).
	Watch *audit.WatchMetrics
}

// Record leaves the run's traces: the audit log and journald of the
// findings in logged (rep's, or those of them worth recording again), the
// metrics of all of rep. journald is best effort: where it is not
// running, nothing is sent and the audit log is the record.
func (r Records) Record(rep, logged *audit.Report, signals []audit.Record, took time.Duration) error {
	if r.AuditLog != "" {
		err := audit.AppendLog(r.AuditLog, logged, signals)
		switch {
		case err != nil && len(signals) == 0 && r.Log != nil:
			// A run that signalled nothing (a dry run, a reap that refused
			// to act unrecorded) has nothing unrecorded: said.
			r.Log.Warn("the audit log was not written", "path", r.AuditLog, "err", err)
		case err != nil:
			return err
		}
	}
	if r.Journal == "on" || r.Journal == "auto" && rep.Mode == string(policy.ModeReap) {
		sent, err := audit.Journal(logged, signals)
		switch {
		case err != nil && r.Log != nil:
			r.Log.Warn("journald records not written", "err", err)
		case !sent && r.Journal == "on" && r.Log != nil:
			// Asked for, and not there: said, not silent.
			r.Log.Warn("--journal on: journald is not running here; nothing was sent to it (the audit log and metrics are the record)")
		}
	}
	if r.Metrics != "" {
		if err := audit.WriteMetrics(r.Metrics, rep, signals, took, r.Watch); err != nil {
			return err
		}
	}
	return nil
}

// Failures counts what the plan meant to signal and did not: refused,
// failed or not confirmed gone (refusals for unreadable state included),
// and apart, what failed only for the kernel refusing a signal (EPERM).
// Refusals by design (younger than min_age, spared because it became
// owned) are neither.
func (r *Reaped) Failures() (partial, permission int) {
	for i, res := range r.Results {
		it := &r.Plan.Items[i]
		switch {
		case !it.Signals() || it.Benign:
		case res.Permission:
			permission++
		case res.Outcome == policy.Failed, res.Outcome == policy.Refused, res.Outcome == policy.Interrupted:
			partial++
		}
	}
	return partial, permission
}

// Status is the reap's exit status (README, "Command line and exit
// status") from what it failed to do (Failures): ExitPartial when
// anything the plan meant to signal was refused, failed, or could not be
// confirmed gone; ExitPermission when what failed was only the kernel
// refusing a signal (EPERM); nil when every planned action was done.
func (r *Reaped) Status() error {
	partial, permission := r.Failures()
	switch {
	case partial > 0:
		n := partial + permission
		verb := map[bool]string{true: "was", false: "were"}[n == 1]
		return &audit.StatusError{Code: audit.ExitPartial, Msg: fmt.Sprintf("%s %s refused or failed (see each finding's detail)", audit.Plural(n, "planned action"), verb)}
	case permission > 0:
		return &audit.StatusError{Code: audit.ExitPermission, Msg: "lacking the privilege for a planned action (run as the processes' user, or as root)"}
	}
	return nil
}
