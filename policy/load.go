package policy

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"sort"

	"github.com/BurntSushi/toml"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

//go:embed default.toml
var defaultPolicy string

// DefaultSource is the Source of the embedded default policy.
const DefaultSource = "embedded default"

// Default returns the embedded default policy, for the clients c: it
// only reports.
func Default(c Clients) *Policy {
	p, err := Parse(DefaultSource, []byte(defaultPolicy), c)
	if err != nil {
		panic("embedded default policy is invalid: " + err.Error())
	}
	return p
}

// DefaultText is the embedded default policy's TOML, for `policy show`.
func DefaultText() string { return defaultPolicy }

// MaxSize caps a policy file. A policy with a hundred rules is a few
// kilobytes; a cap keeps a policy path that names /dev/zero, or a huge file,
// from taking the reaper's memory (the TOML decoder holds several copies).
const MaxSize = 1 << 20

// Load reads and validates the policy file at path, for the clients c.
// The file is read as platform.ReadFile reads: a regular file (a FIFO or a
// device is refused, never waited on), at most MaxSize bytes.
func Load(path string, c Clients) (*Policy, error) {
	b, err := platform.ReadFile(path, MaxSize)
	if err != nil {
		msg := err.Error()
		var fe *platform.FileError
		if errors.As(err, &fe) {
			msg = fe.Err.Error()
		}
		return nil, &Error{File: path, Msg: msg, Err: err}
	}
	return Parse(path, b, c)
}

// Parse validates a policy for the clients c (the owner names a rule may
// name; the marks its scan applies). name is used in error messages. The
// error, if any, is an Errors listing every problem found.
func Parse(name string, data []byte, c Clients) (*Policy, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, Errors{{File: name, Line: errorLine(data, pe.Position), Msg: pe.Message}}
		}
		return nil, Errors{{File: name, Msg: err.Error()}}
	}
	l := &loader{file: name, lines: indexLines(string(data)), p: &Policy{Source: name, marks: c.Marks}, clients: c}
	l.document(doc)
	if len(l.errs) > 0 {
		sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Line < l.errs[j].Line })
		return nil, l.errs
	}
	return l.p, nil
}

// errorLine is the line of a syntax error. The decoder counts a newline it
// stopped at into its line number ("[defaults⏎" is reported on the next
// line); the byte offset says where the problem really is.
func errorLine(data []byte, pos toml.Position) int {
	if pos.Start >= 0 && pos.Start < len(data) {
		return 1 + bytes.Count(data[:pos.Start], []byte{'\n'})
	}
	return pos.Line
}

// loader validates one document, collecting every error.
type loader struct {
	file    string
	lines   lineIndex
	p       *Policy
	errs    Errors
	clients Clients
}

// at names a place in the document: a table (with its index in an array of
// tables, or -1) and a key in it.
type at struct {
	table string
	index int
	key   string
}

func (l *loader) fail(a at, format string, args ...any) {
	l.errs = append(l.errs, &Error{File: l.file, Line: l.lines.line(a.table, a.index, a.key), Msg: fmt.Sprintf(format, args...)})
}

var topKeys = []string{"version", "defaults", "owner", "msix", "client", "subreaper", "rule", "protect"}

func (l *loader) document(doc map[string]any) {
	l.unknownKeys(doc, at{index: -1}, topKeys)
	switch v, ok := doc["version"]; {
	case !ok:
		l.fail(at{index: -1}, "version is missing: the first line of a policy is `version = 1`")
	case v != int64(1):
		l.fail(at{index: -1, key: "version"}, "unsupported version %v: this reaper reads version 1", v)
	}
	l.defaults(doc["defaults"])
	for i, t := range l.tables(doc, "owner") {
		l.owner(t, at{table: "owner", index: i})
	}
	for i, t := range l.tables(doc, "msix") {
		l.msix(t, at{table: "msix", index: i})
	}
	for i, t := range l.tables(doc, "client") {
		l.client(t, at{table: "client", index: i})
	}
	for i, t := range l.tables(doc, "subreaper") {
		a := at{table: "subreaper", index: i}
		l.unknownKeys(t, a, []string{"comm", "cmdline"})
		re := l.regex(t, a, "cmdline")
		if re == nil {
			if _, given := t["cmdline"]; !given { // a bad one has its own error
				l.fail(a, "[[subreaper]] needs a cmdline")
			}
			continue
		}
		l.p.Subreapers = append(l.p.Subreapers, Subreaper{scan.Subreaper{Comm: l.regex(t, a, "comm"), Cmdline: re}, l.lines.line("subreaper", i, "")})
	}
	for i, t := range l.tables(doc, "rule") {
		l.rule(t, at{table: "rule", index: i})
	}
	for i, t := range l.tables(doc, "protect") {
		l.protect(t, at{table: "protect", index: i})
	}
}
