package audit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/policy"
)

// The MESSAGE_ID of each record type, fixed so that journalctl can select
// them: journalctl MESSAGE_ID=8f3a… (systemd's catalog convention).
const (
	MessageIDDecision = "8f3a1c9d5b2e4f6a8c0d1e2f3a4b5c6d"
	MessageIDSignal   = "2b7e9c4a1d3f4e5b9a8c7d6e5f4a3b2c"
	MessageIDStorm    = "c41e7a9b3f5d4c2e8b6a0f1d2e3c4b5a"
)

// syslog priorities (syslog(3)) for the records.
const (
	priWarning = 4
	priNotice  = 5
	priInfo    = 6
)

// Journal sends one record per decision and per signal to journald, when
// journald is there; otherwise it does nothing and returns false (the
// audit log, if asked for, still has everything).
func Journal(r *Report, signals []Record) (bool, error) {
	if !host.JournalEnabled() {
		return false, nil
	}
	for _, e := range journalEntries(r, signals) {
		if err := host.JournalSend(e.msg, e.pri, e.fields); err != nil {
			return true, fmt.Errorf("journald: %w", err)
		}
	}
	return true, nil
}

// JournalStorm sends a fork storm's start (or its end: over) to
// journald, when journald is there: journalctl MESSAGE_ID=c41e7a9b…
// selects them, REAPER_PID and REAPER_RATE say whose and how fast.
func JournalStorm(s Storm, over bool) (bool, error) {
	if !host.JournalEnabled() {
		return false, nil
	}
	e := stormEntry(s, over)
	if err := host.JournalSend(e.msg, e.pri, e.fields); err != nil {
		return true, fmt.Errorf("journald: %w", err)
	}
	return true, nil
}

// stormEntry is a storm's record: a warning as it starts, a notice as it
// ends.
func stormEntry(s Storm, over bool) journalEntry {
	e := journalEntry{msg: Term(s.Line(), maxText), pri: priWarning, fields: map[string]string{
		"SYSLOG_IDENTIFIER": "reaper", "MESSAGE_ID": MessageIDStorm, "REAPER_EVENT": "fork-storm",
		"REAPER_PID": strconv.Itoa(s.PID), "REAPER_COMM": s.Comm, "REAPER_USER": s.User, "REAPER_UID": strconv.FormatInt(s.UID, 10),
		"REAPER_RATE": strconv.Itoa(s.Rate), "REAPER_STORM_RATE": strconv.Itoa(s.Threshold), "REAPER_SEEN": s.Seen, "REAPER_CMDLINE": s.Command,
	}}
	if over {
		e.msg, e.pri = Printable(fmt.Sprintf("fork storm over: pid %d (%s), after %s", s.PID, s.Comm, s.For)), priNotice
		e.fields["REAPER_EVENT"] = "fork-storm-over"
	}
	e.fields = journalFields(e.fields)
	return e
}

// journalEntry is one record for journald: its MESSAGE, priority and
// fields.
type journalEntry struct {
	msg    string
	pri    int
	fields map[string]string
}

// journalEntries are the records of r and its signals. The MESSAGE, what
// journalctl shows as the line, is escaped (Printable): no word in it can
// start a line of its own or reach a terminal as a control sequence. The
// REAPER_* fields are sent whole, as binary-safe fields of the native
// protocol.
func journalEntries(r *Report, signals []Record) []journalEntry {
	var out []journalEntry
	for _, s := range signals {
		fields := map[string]string{
			"SYSLOG_IDENTIFIER": "reaper",
			"MESSAGE_ID":        MessageIDSignal,
			"REAPER_MODE":       r.Mode,
			"REAPER_ROOT":       strconv.Itoa(s.RootPID),
			"REAPER_PID":        strconv.Itoa(s.PID),
			"REAPER_START":      s.Start,
			"REAPER_SIGNAL":     s.Signal,
			"REAPER_RESULT":     s.Result,
		}
		msg := fmt.Sprintf("%s to pid %d: %s", s.Signal, s.PID, s.Result)
		if s.Via != "" {
			fields["REAPER_VIA"] = s.Via
			msg = fmt.Sprintf("%s to pid %d by %s: %s", s.Signal, s.PID, s.Via, s.Result)
		}
		out = append(out, journalEntry{Term(msg, maxText), priNotice, journalFields(fields)})
	}
	for _, f := range r.Findings {
		pri := priInfo
		switch f.Outcome {
		case policy.Killed:
			pri = priNotice
		case policy.Failed, policy.Refused, policy.Interrupted:
			pri = priWarning
		}
		fields := map[string]string{
			"SYSLOG_IDENTIFIER": "reaper",
			"MESSAGE_ID":        MessageIDDecision,
			"REAPER_MODE":       r.Mode,
			"REAPER_PID":        strconv.Itoa(f.RootPID),
			"REAPER_PIDS":       joinInts(f.PIDs),
			"REAPER_START":      f.Start,
			"REAPER_KIND":       f.Kind,
			"REAPER_REASONS":    strings.Join(f.Reasons, ","),
			"REAPER_RULE":       f.Rule,
			"REAPER_ACTION":     f.Action,
			"REAPER_OUTCOME":    string(f.Outcome),
			"REAPER_DETAIL":     f.Detail,
			"REAPER_OWNER":      f.Owner,
			"REAPER_RSS":        strconv.FormatUint(f.RSSBytes, 10),
			"REAPER_UID":        strconv.FormatInt(f.UID, 10),
			"REAPER_USER":       f.User,
			"REAPER_CMDLINE":    f.Cmdline,
		}
		msg := fmt.Sprintf("%s %s tree of pid %d (%s): %s", f.Rule, f.Kind, f.RootPID, strings.Join(f.Reasons, ", "), f.Outcome)
		out = append(out, journalEntry{Term(msg, maxText), pri, journalFields(fields)})
	}
	return out
}

// journalFields are fields as journald is sent them: each value through
// JournalField.
func journalFields(fields map[string]string) map[string]string {
	for k, v := range fields {
		fields[k] = JournalField(v)
	}
	return fields
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
