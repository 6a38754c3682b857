//go:build !unix

package kill

// No job control here: the values stand for the verbs, and every signal
// fails (signal_fallback.go).
const (
	Stop     Signal = -19
	Continue Signal = -18
)
