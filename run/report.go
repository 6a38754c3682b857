package run

import (
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
