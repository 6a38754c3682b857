package audit

// The exit statuses of a reaper command (README, "Command line and exit
// status"): cmd/reaper maps a run's errors and outcomes to them, doctor
// reads a service's last one.
const (
	ExitOK         = 0
	ExitError      = 1  // runtime error
	ExitUsage      = 2  // bad command line
	ExitPartial    = 3  // a planned action was refused or failed, or a process survived SIGKILL
	ExitFindings   = 4  // scan --exit-code: the scan reported findings
	ExitNoInput    = 66 // a policy or ledger named on the command line can't be opened (EX_NOINPUT)
	ExitPermission = 77 // lacks the privilege for a planned action (EX_NOPERM)
	ExitConfig     = 78 // invalid policy or ledger; nothing was signalled (EX_CONFIG)
)

// ExitMeaning says what one of reaper's exit statuses means (doctor reads
// a unit's last one).
func ExitMeaning(code int) string {
	switch code {
	case ExitOK:
		return "success"
	case ExitError:
		return "a runtime error"
	case ExitUsage:
		return "a usage error in the unit's command line"
	case ExitPartial:
		return "a planned action was refused or failed"
	case ExitFindings:
		return "findings (scan --exit-code)"
	case ExitNoInput:
		return "a policy or ledger the command line names cannot be opened"
	case ExitPermission:
		return "lacking the privilege for a planned action"
	case ExitConfig:
		return "invalid policy or ledger: nothing was signalled"
	}
	return "not one of reaper's exit statuses"
}

// StatusError ends a command with one of these statuses once what it had
// to say was written: Code is the status, Msg its one line.
type StatusError struct {
	Code int
	Msg  string
}

func (e *StatusError) Error() string { return e.Msg }
