package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/view"
	"github.com/orphanreaper/reaper/setup"
)

// configError is an invalid policy or ledger whose details were printed.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

// noInputError is what was named on the command line that could not be
// opened at all (exit 66), when it is not a policy or ledger error.
type noInputError struct{ err error }

func (e noInputError) Error() string { return e.err.Error() }
func (e noInputError) Unwrap() error { return e.err }

// usageError is a mistake on the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode prints err, if any, and maps it to the process's exit status.
// It is the only place that knows the codes. Every line of the error
// carries "reaper:" (a policy with several errors prints one per line);
// a usage error points at the help of the command that was run (cmdPath,
// "reaper" when unknown).
func exitCode(err error, stderr io.Writer, cmdPath ...string) int {
	if err == nil {
		return audit.ExitOK
	}
	var es exitStatus
	if errors.As(err, &es) {
		return int(es) // reaper run passes its command's status on, said by the command itself
	}
	// Each line escaped: an error can name what a user named (a path, a
	// command), and under a unit stderr is the journal.
	for _, line := range strings.Split(strings.TrimRight(err.Error(), "\n"), "\n") {
		fmt.Fprintf(stderr, "reaper: %s\n", audit.Printable(line))
	}
	var st *audit.StatusError
	if errors.As(err, &st) {
		return st.Code
	}
	var pe *policy.Error
	var le *ledger.Error
	var ue usageError
	var ce configError
	var ne noInputError
	var se *setup.UsageError
	var np *view.NoProcessError
	switch {
	case errors.As(err, &np):
		return audit.ExitError // a pid is no file: EX_NOINPUT is for those
	case errors.As(err, &ne):
		return audit.ExitNoInput
	case (errors.As(err, &pe) || errors.As(err, &le)) && noInput(err):
		return audit.ExitNoInput
	case errors.As(err, &pe), errors.As(err, &le), errors.As(err, &ce):
		return audit.ExitConfig
	case errors.As(err, &ue), errors.As(err, &se), errors.Is(err, run.ErrProcFlag):
		help := "reaper"
		if len(cmdPath) > 0 && cmdPath[0] != "" {
			help = cmdPath[0]
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", help)
		return audit.ExitUsage
	}
	return audit.ExitError
}

// noInput: a file named could not be opened at all (run.NoInput).
var noInput = run.NoInput
