package statedir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/orphanreaper/reaper/ledger"
)

// Clients' configs are JSON5 (json5.org: OpenClaw's) or JSON with
// comments (JSONC, a subset: OpenCode's, Gemini CLI's): JSON plus
// comments, trailing commas, unquoted keys, single-quoted strings and a few
// more number forms. ParseJSON5 rewrites it as JSON for encoding/json, and
// keeps where each output token came from so an error names the input
// line. It never evaluates anything.

// JSON5 is the JSON form of a JSON5 document.
type JSON5 struct {
	out   []byte
	marks []json5Mark // output offset → input line, in output order
}

type json5Mark struct{ off, line int }

// line is the input line of the output byte at off.
func (d *JSON5) line(off int) int {
	i := sort.Search(len(d.marks), func(i int) bool { return d.marks[i].off > off })
	if i == 0 {
		return 1
	}
	return d.marks[i-1].line
}

// Unmarshal decodes the document into v; an error names the input line.
func (d *JSON5) Unmarshal(v any) (line int, err error) {
	err = json.Unmarshal(d.out, v)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return d.line(int(se.Offset) - 1), err
	case errors.As(err, &te):
		return d.line(int(te.Offset) - 1), err
	}
	return 0, err
}

// ParseJSON5 reads a JSON5 document; an error names the input line (the
// caller names the file).
func ParseJSON5(in []byte) (*JSON5, error) {
	c := &json5Conv{in: in, line: 1}
	if err := c.run(); err != nil {
		return nil, err
	}
	return &JSON5{out: c.out, marks: c.marks}, nil
}

type json5Conv struct {
	in    []byte
	i     int
	line  int
	out   []byte
	marks []json5Mark
}

// fail is a syntax error at the current input line; the caller names the
// file.
func (c *json5Conv) fail(format string, a ...any) error {
	return &ledger.Error{Line: c.line, Msg: fmt.Sprintf(format, a...)}
}

func (c *json5Conv) mark() {
	if n := len(c.marks); n == 0 || c.marks[n-1].line != c.line {
		c.marks = append(c.marks, json5Mark{off: len(c.out), line: c.line})
	}
}

// skipSpace skips white space and comments, counting lines.
func (c *json5Conv) skipSpace() error {
	for c.i < len(c.in) {
		b := c.in[c.i]
		switch {
		case b == '\n':
			c.line++
			c.i++
		case b == ' ' || b == '\t' || b == '\r' || b == '\v' || b == '\f':
			c.i++
		case b == '/' && c.i+1 < len(c.in) && c.in[c.i+1] == '/':
			for c.i < len(c.in) && c.in[c.i] != '\n' {
				c.i++
			}
		case b == '/' && c.i+1 < len(c.in) && c.in[c.i+1] == '*':
			end := bytes.Index(c.in[c.i+2:], []byte("*/"))
			if end < 0 {
				return c.fail("a /* comment is not closed")
			}
			c.line += bytes.Count(c.in[c.i:c.i+2+end], []byte("\n"))
			c.i += end + 4
		case b >= 0x80:
			// U+FEFF (byte order mark), U+00A0, U+2028 and U+2029 are
			// white space in JSON5.
			r, n := utf8.DecodeRune(c.in[c.i:])
			if r != 0xFEFF && r != 0xA0 && r != 0x2028 && r != 0x2029 {
				return nil
			}
			c.i += n
		default:
			return nil
		}
	}
	return nil
}

func (c *json5Conv) run() error {
	depth := 0
	for {
		if err := c.skipSpace(); err != nil {
			return err
		}
		if c.i >= len(c.in) {
			return nil
		}
		c.mark()
		b := c.in[c.i]
		switch {
		case b == '{' || b == '[':
			if depth++; depth > 256 {
				return c.fail("nested more than 256 deep")
			}
			c.out = append(c.out, b)
			c.i++
		case b == '}' || b == ']':
			depth--
			c.out = append(c.out, b)
			c.i++
		case b == ':':
			c.out = append(c.out, b)
			c.i++
		case b == ',':
			c.i++
			// A trailing comma before } or ] is dropped.
			if err := c.skipSpace(); err != nil {
				return err
			}
			if c.i < len(c.in) && (c.in[c.i] == '}' || c.in[c.i] == ']') {
				continue
			}
			c.out = append(c.out, ',')
		case b == '"' || b == '\'':
			s, err := c.str(b)
			if err != nil {
				return err
			}
			q, _ := json.Marshal(s)
			c.out = append(c.out, q...)
		case b == '_' || b == '$' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z':
			start := c.i
			for c.i < len(c.in) && isIdent(c.in[c.i]) {
				c.i++
			}
			switch id := string(c.in[start:c.i]); id {
			case "true", "false", "null":
				c.out = append(c.out, id...)
			case "Infinity", "NaN":
				c.out = append(c.out, "null"...) // not representable in JSON; never a value reaper reads
			default:
				q, _ := json.Marshal(id) // an unquoted key
				c.out = append(c.out, q...)
			}
		case b == '+' || b == '-' || b == '.' || b >= '0' && b <= '9':
			if err := c.number(); err != nil {
				return err
			}
		default:
			return c.fail("unexpected character")
		}
	}
}

func isIdent(b byte) bool {
	return b == '_' || b == '$' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// str reads a string quoted with q, with JSON5's escapes.
func (c *json5Conv) str(q byte) (string, error) {
	c.i++
	var sb strings.Builder
	for c.i < len(c.in) {
		b := c.in[c.i]
		switch {
		case b == q:
			c.i++
			return sb.String(), nil
		case b == '\n':
			return "", c.fail("a string is not closed on its line")
		case b != '\\':
			sb.WriteByte(b)
			c.i++
			continue
		}
		c.i++
		if c.i >= len(c.in) {
			break
		}
		e := c.in[c.i]
		c.i++
		switch e {
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'v':
			sb.WriteByte('\v')
		case '0':
			sb.WriteByte(0)
		case '\n':
			c.line++ // a line continuation
		case '\r':
			if c.i < len(c.in) && c.in[c.i] == '\n' {
				c.i++
			}
			c.line++
		case 'x', 'u':
			n := 2
			if e == 'u' {
				n = 4
			}
			if c.i+n > len(c.in) {
				return "", c.fail("a \\%c escape is cut short", e)
			}
			v, err := strconv.ParseUint(string(c.in[c.i:c.i+n]), 16, 32)
			if err != nil {
				return "", c.fail("bad \\%c escape", e)
			}
			c.i += n
			r := rune(v)
			// A UTF-16 surrogate pair is one character, as in JSON.
			if utf16.IsSurrogate(r) && c.i+6 <= len(c.in) && c.in[c.i] == '\\' && c.in[c.i+1] == 'u' {
				if lo, err := strconv.ParseUint(string(c.in[c.i+2:c.i+6]), 16, 32); err == nil {
					if pair := utf16.DecodeRune(r, rune(lo)); pair != utf8.RuneError {
						r = pair
						c.i += 6
					}
				}
			}
			sb.WriteRune(r)
		default:
			sb.WriteByte(e) // \' \" \\ \/ and any other character stand for themselves
		}
	}
	return "", c.fail("a string is not closed")
}

// number reads a JSON5 number and writes it as JSON.
func (c *json5Conv) number() error {
	start := c.i
	for c.i < len(c.in) && (isIdent(c.in[c.i]) || c.in[c.i] == '.' || c.in[c.i] == '+' || c.in[c.i] == '-') {
		c.i++
	}
	tok := string(c.in[start:c.i])
	sign := ""
	body := tok
	if body != "" && (body[0] == '+' || body[0] == '-') {
		if body[0] == '-' {
			sign = "-"
		}
		body = body[1:]
	}
	switch {
	case body == "Infinity" || body == "NaN":
		c.out = append(c.out, "null"...)
		return nil
	case strings.HasPrefix(body, "0x") || strings.HasPrefix(body, "0X"):
		v, err := strconv.ParseUint(body[2:], 16, 64)
		if err != nil {
			return c.fail("bad number")
		}
		c.out = append(c.out, sign+strconv.FormatUint(v, 10)...)
		return nil
	}
	if _, err := strconv.ParseFloat(body, 64); err != nil || body == "" || body[0] == '+' || body[0] == '-' {
		return c.fail("bad number")
	}
	if body[0] == '.' {
		body = "0" + body
	}
	if i := strings.IndexByte(body, '.'); i >= 0 && (i+1 == len(body) || body[i+1] < '0' || body[i+1] > '9') {
		body = body[:i+1] + "0" + body[i+1:] // "5." and "5.e3" are JSON5, not JSON
	}
	c.out = append(c.out, sign+body...)
	return nil
}

// UnmarshalJSON5 reads a JSON5 (or JSON with comments) document into v;
// an error names the input line.
func UnmarshalJSON5(b []byte, v any) (int, error) {
	doc, err := ParseJSON5(b)
	if err != nil {
		var e *ledger.Error
		if errors.As(err, &e) {
			return e.Line, errors.New(e.Msg)
		}
		return 0, err
	}
	return doc.Unmarshal(v)
}
