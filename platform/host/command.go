package host

// NotStartedError is a command that could not be started: not found
// (NotFound: on no PATH entry, or no such file), or not executable.
type NotStartedError struct {
	Err      error
	NotFound bool
}

func (e *NotStartedError) Error() string { return e.Err.Error() }
func (e *NotStartedError) Unwrap() error { return e.Err }
