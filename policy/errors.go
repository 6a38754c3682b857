package policy

import (
	"fmt"
	"strings"
)

// Error is one problem in a policy file, with the line it is on when known.
type Error struct {
	File string
	Line int // 0 when unknown
	Msg  string
	// Err is the cause when the file could not be read at all: callers
	// tell "cannot open" from "invalid" with errors.Is on it.
	Err error
}

// Unwrap returns the cause of a file that could not be read.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Errors is every problem found in one policy file, in line order.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap lets errors.As find the individual errors.
func (es Errors) Unwrap() []error {
	errs := make([]error, len(es))
	for i, e := range es {
		errs[i] = e
	}
	return errs
}
