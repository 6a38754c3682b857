//go:build !unix

package kill

// No job control here: the values stand for the verbs, and every signal
// fails (unsupported.go).
const (
	Stop     Signal = -19
	Continue Signal = -18
)
