package statedir

import (
	"errors"
	"io/fs"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// Report is what a state dir's reader could not read, as plain data that
// crosses the reader child's boundary: Problems are files that exist and
// could not be read or parsed — what they would have said is missing, so
// the dir's owner's trees are in doubt; Skipped are files of another owner,
// or in a directory of another owner, which are not the owner's word and
// were not read: reported, never doubt. An adapter's Raw embeds it.
type Report struct {
	Problems []Problem `json:"problems,omitempty"`
	Skipped  []string  `json:"skipped,omitempty"`
}

// Problem is a file that could not be read, as plain data: the file, the
// line where known, what was wrong, and Cause when it could not be opened
// at all (one of causes' keys).
type Problem struct {
	File  string `json:"file"`
	Line  int    `json:"line,omitempty"`
	Msg   string `json:"msg"`
	Cause string `json:"cause,omitempty"`
}

// causes name the errors a file that could not be opened carries, so that
// a problem that crossed a process boundary is still told from one that
// was read and is wrong (exit 66 against 78).
var causes = map[string]error{
	"not-exist":   fs.ErrNotExist,
	"permission":  fs.ErrPermission,
	"not-regular": platform.ErrNotRegular,
	"symlink":     platform.ErrSymlink,
	"not-owner":   platform.ErrNotOwner,
}

// Errors are the problems as errors (*ledger.Error), each with its cause.
func (r *Report) Errors() []error {
	var out []error
	for _, p := range r.Problems {
		e := &ledger.Error{File: p.File, Line: p.Line, Msg: p.Msg}
		if c, ok := causes[p.Cause]; ok {
			e.Err = c
		}
		out = append(out, e)
	}
	return out
}

// Problem records err, a *ledger.Error or any error.
func (r *Report) Problem(err error) {
	var le *ledger.Error
	if !errors.As(err, &le) {
		le = &ledger.Error{Msg: err.Error()}
	}
	p := Problem{File: le.File, Line: le.Line, Msg: le.Msg}
	for name, c := range causes {
		if errors.Is(err, c) {
			p.Cause = name
		}
	}
	r.Problems = append(r.Problems, p)
}

// ReadError records a file that could not be read: skipped when it is
// another user's (not this user's word), a problem otherwise.
func (r *Report) ReadError(path string, err error) {
	if errors.Is(err, platform.ErrNotOwner) {
		r.Skip(path, "not the state's user's file: not read")
		return
	}
	r.Problem(ledger.ReadError(path, err))
}

// maxSkipped bounds the skipped files listed for one dir.
const maxSkipped = 16

// Skip notes a file not read, and why, up to maxSkipped of them.
func (r *Report) Skip(path, why string) {
	if len(r.Skipped) < maxSkipped {
		r.Skipped = append(r.Skipped, path+": "+why)
	}
}
