package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// MaxSize bounds a ledger file. A supervisor with thousands of runs writes
// well under a megabyte; anything past this is not a ledger to trust.
const MaxSize = 16 << 20

// ReadFile reads and validates the ledger at path. Its Speaker is the
// file's owner.
func ReadFile(path string) (*Ledger, error) {
	data, uid, err := platform.ReadFileOwner(path, MaxSize)
	if err != nil {
		return nil, ReadError(path, err)
	}
	l, err := Parse(path, data)
	if l != nil {
		l.Speaker = uid
	}
	return l, err
}

// Parse validates a ledger document; name is used in errors. Unknown fields
// are ignored; an unknown version, a wrong type, a missing or invalid
// required field, or trailing data is an error with the line it is on.
func Parse(name string, data []byte) (*Ledger, error) {
	p := parser{name: name, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	l, err := p.document()
	if err != nil {
		return nil, err
	}
	l.Source = name
	return l, nil
}

type parser struct {
	name string
	data []byte
	dec  *json.Decoder
}

func (p *parser) errAt(offset int64, format string, args ...any) *Error {
	return &Error{File: p.name, Line: LineOf(p.data, offset), Msg: fmt.Sprintf(format, args...)}
}

// lineOf is the 1-based line of byte offset in data.
func LineOf(data []byte, offset int64) int {
	if offset < 0 {
		return 0
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return 1 + bytes.Count(data[:offset], []byte{'\n'})
}

// valueStart moves an offset from the end of the previous token to the
// start of the next value: InputOffset stops before separators.
func (p *parser) valueStart(at int64) int64 {
	for at < int64(len(p.data)) && bytes.IndexByte([]byte(" \t\r\n,:"), p.data[at]) >= 0 {
		at++
	}
	return at
}

// decode decodes the value starting at offset at into v.
func (p *parser) decode(at int64, v any) error {
	if err := p.dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Type errors count from the start of the value decoded.
			te.Offset += at
		}
		return p.jsonErr(err)
	}
	return nil
}

// jsonErr turns a decoder error into an Error with its line.
func (p *parser) jsonErr(err error) *Error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return p.errAt(se.Offset, "not valid JSON")
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "value"
		}
		return p.errAt(te.Offset, "%s: %s where %s is wanted", field, withArticle("JSON "+jsonKind(te.Value)), withArticle(te.Type.String()))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return p.errAt(int64(len(p.data)), "truncated: the document ends early")
	}
	return p.errAt(p.dec.InputOffset(), "not valid JSON")
}

// jsonKind is the kind of a JSON value as encoding/json describes it
// ("number 5", "string"), without the value: errors never quote a file.
func jsonKind(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	return kind
}

// document walks the top-level object key by key, so that each session and
// run is decoded on its own and an error names its line.
func (p *parser) document() (*Ledger, error) {
	if err := p.delim('{'); err != nil {
		return nil, err
	}
	l := &Ledger{}
	var haveVersion, haveOwner bool
	var ownerAt int64
	for p.dec.More() {
		keyAt := p.valueStart(p.dec.InputOffset())
		tok, err := p.dec.Token()
		if err != nil {
			return nil, p.jsonErr(err)
		}
		key, _ := tok.(string)
		switch key {
		case "version":
			haveVersion = true
			if err := p.decode(p.valueStart(p.dec.InputOffset()), &l.Version); err != nil {
				return nil, err
			}
			if l.Version != Version {
				return nil, p.errAt(keyAt, "unsupported ledger version %d: this reaper reads version %d", l.Version, Version)
			}
		case "owner":
			haveOwner, ownerAt = true, p.valueStart(p.dec.InputOffset())
			if err := p.decode(ownerAt, &l.Owner); err != nil {
				return nil, err
			}
		case "sessions":
			if err := p.array(func(at int64) error {
				var s Session
				if err := p.decode(at, &s); err != nil {
					return err
				}
				if err := p.session(l, s, at); err != nil {
					return err
				}
				l.Sessions = append(l.Sessions, s)
				return nil
			}); err != nil {
				return nil, err
			}
		case "runs":
			if err := p.array(func(at int64) error {
				var r Run
				if err := p.decode(at, &r); err != nil {
					return err
				}
				r.Line = LineOf(p.data, at)
				if err := p.run(l, r, at); err != nil {
					return err
				}
				l.Runs = append(l.Runs, r)
				return nil
			}); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage // unknown fields are ignored, but must parse
			if err := p.decode(p.valueStart(p.dec.InputOffset()), &skip); err != nil {
				return nil, err
			}
		}
	}
	if err := p.delim('}'); err != nil {
		return nil, err
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, p.errAt(p.dec.InputOffset(), "data after the ledger object")
	}
	switch {
	case !haveVersion:
		return nil, p.errAt(0, `no "version": a ledger starts {"version": 1, …}`)
	case !haveOwner:
		return nil, p.errAt(0, `no "owner": a ledger names the process that writes it`)
	case l.Owner.Name == "":
		return nil, p.errAt(ownerAt, "owner has no name")
	case l.Owner.PID <= 0:
		return nil, p.errAt(ownerAt, "owner pid %d: want a pid > 0", l.Owner.PID)
	}
	return l, nil
}

func (p *parser) delim(want json.Delim) error {
	at := p.valueStart(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		return p.jsonErr(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return p.errAt(at, "want %q", string(want))
	}
	return nil
}

// array decodes a JSON array element by element, passing each one's offset.
// null is an empty array: writers in many languages encode an empty list so.
func (p *parser) array(each func(at int64) error) error {
	at := p.valueStart(p.dec.InputOffset())
	if at+4 <= int64(len(p.data)) && string(p.data[at:at+4]) == "null" {
		_, err := p.dec.Token()
		return err
	}
	if err := p.delim('['); err != nil {
		return err
	}
	for p.dec.More() {
		if err := each(p.valueStart(p.dec.InputOffset())); err != nil {
			return err
		}
	}
	return p.delim(']')
}

func (p *parser) session(l *Ledger, s Session, at int64) error {
	switch {
	case s.Key == "":
		return p.errAt(at, "session without a key")
	case l.Session(s.Key) != nil:
		return p.errAt(at, "session %q appears twice", s.Key)
	case s.State != SessionActive && s.State != SessionReset && s.State != SessionClosed:
		return p.errAt(at, "session %q: state %q: want active, reset or closed", s.Key, s.State)
	}
	return nil
}

func (p *parser) run(l *Ledger, r Run, at int64) error {
	switch {
	case r.ID == "":
		return p.errAt(at, "run without an id")
	case l.Run(r.ID) != nil:
		return p.errAt(at, "run %q appears twice", r.ID)
	case r.PID < 0 || r.PGID < 0:
		return p.errAt(at, "run %q: negative pid or pgid", r.ID)
	case r.State != RunRunning && r.State != RunDone:
		return p.errAt(at, "run %q: state %q: want running or done", r.ID, r.State)
	case r.Kind != "" && !slices.Contains(Kinds, r.Kind):
		return p.errAt(at, "run %q: kind %q: want pty, acp, mcp, exec or other", r.ID, r.Kind)
	}
	return nil
}

// withArticle puts "a" or "an" before a word: "an int", "a JSON string".
func withArticle(w string) string {
	if w != "" && strings.ContainsRune("aeiouAEIOU", rune(w[0])) {
		return "an " + w
	}
	return "a " + w
}
