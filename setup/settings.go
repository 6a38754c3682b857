package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// HookMark ends the command of every hook reaper adds to a client's
// settings: a shell comment, so it runs as nothing, by which add and
// remove know reaper's own entry and nothing else. What add had to make
// around the entry is said after it, so that remove takes out exactly
// that: MadeEvent (the event's array), MadeHooks (the hooks object).
const (
	HookMark  = "# reaper hook"
	MadeEvent = " +event"
	MadeHooks = " +hooks"
	// MadeFile: add made the whole file (there was none); remove gives
	// back Skeleton, which uninstall then removes.
	MadeFile = " +file"
)

// Skeleton is what is left of a file add made once its hook is removed.
const Skeleton = "{}\n"

// A settings file is edited as bytes, never decoded and encoded again:
// the user's order, spacing, newlines and numbers stay as they were. The
// document is checked first (valid JSON, one object, nothing after it, no
// key twice in the objects edited — a client that keeps the last of two
// "hooks" would not see an entry put in the first), and every edit is the
// exact inverse of the other: remove(add(x)) == x for every x add takes
// (FuzzSettingsEdit).

// member is one member of a JSON object: its key, where the key's quote
// is, and where its value's bytes are.
type member struct {
	key               string
	keyAt, start, end int
}

// span is one element of a JSON array: where its bytes are.
type span struct{ start, end int }

// SettingsError is a settings file that cannot be edited safely, with the
// line and column of what is wrong.
type SettingsError struct {
	Line, Col int
	Msg       string
}

func (e *SettingsError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// errorAt is a SettingsError at data[off].
func errorAt(data []byte, off int, format string, args ...any) error {
	off = min(max(off, 0), len(data))
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return &SettingsError{line, col, fmt.Sprintf(format, args...)}
}

// check refuses what is not one JSON object alone, with where it goes
// wrong.
func check(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return errorAt(data, int(se.Offset)-1, "not valid JSON: %v", se)
		}
		return errorAt(data, 0, "not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errorAt(data, skipSpace(data, 0), "not a JSON object")
	}
	return nil
}

func skipSpace(data []byte, at int) int {
	for at < len(data) && strings.IndexByte(" \t\r\n", data[at]) >= 0 {
		at++
	}
	return at
}

// objectAt reads the object whose '{' is at data[at:] (after whitespace)
// and returns where its '{' is and its members, in order; a key twice is
// refused.
func objectAt(data []byte, at int, what string) (open int, members []member, err error) {
	dec := json.NewDecoder(bytes.NewReader(data[at:]))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return 0, nil, errorAt(data, skipSpace(data, at), "%s is not an object", what)
	}
	open = at + int(dec.InputOffset()) - 1
	seen := map[string]bool{}
	for dec.More() {
		from := at + int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return 0, nil, errorAt(data, from, "%v", err)
		}
		key, _ := tok.(string)
		keyAt := from + bytes.IndexByte(data[from:], '"')
		if seen[key] {
			return 0, nil, errorAt(data, keyAt, "%s has %q twice: which one the client reads is not known, so neither is edited", what, key)
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, nil, errorAt(data, keyAt, "%v", err)
		}
		end := at + int(dec.InputOffset())
		members = append(members, member{key, keyAt, end - len(raw), end})
	}
	if _, err := dec.Token(); err != nil {
		return 0, nil, errorAt(data, open, "%v", err)
	}
	return open, members, nil
}

// arrayAt reads the array whose '[' is at data[at:] and returns where its
// '[' is and its elements.
func arrayAt(data []byte, at int, what string) (open int, elems []span, err error) {
	dec := json.NewDecoder(bytes.NewReader(data[at:]))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '[' {
		return 0, nil, errorAt(data, skipSpace(data, at), "%s is not an array", what)
	}
	open = at + int(dec.InputOffset()) - 1
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, nil, errorAt(data, open, "%v", err)
		}
		end := at + int(dec.InputOffset())
		elems = append(elems, span{end - len(raw), end})
	}
	return open, elems, nil
}

// splice is data with data[start:end] replaced by s.
func splice(data []byte, start, end int, s string) []byte {
	return append(append(append([]byte{}, data[:start]...), s...), data[end:]...)
}

// memberText is what add puts after the '{' at data[open] for a new first
// member, in the file's own layout: before the object's first member, the
// bytes that stand before that member now (its newline and indentation),
// with a comma after; in an empty object, a line one indentation unit in
// from the line of the '{' (the unit is the top-level object's: a file indented
// with tabs or four spaces gains tabs or four spaces), and a line back at
// the indentation of the '{' before whatever the object held.
func memberText(data, sh []byte, open int, members []member, key, value string) string {
	text := jsonString(key) + ": " + value
	if len(members) > 0 {
		before := data[open+1 : members[0].keyAt]
		if !bytes.Equal(before, sh[open+1:members[0].keyAt]) {
			// A comment stands there: the new member goes on a line of
			// its own, at the first member's indentation, and the comment
			// stays where it was, before that member.
			return "\n" + lineIndent(data, members[0].keyAt) + text + ","
		}
		return string(before) + text + ","
	}
	indent := lineIndent(data, open)
	return "\n" + indent + indentUnit(sh) + text + "\n" + indent
}

// lineIndent is the whitespace that begins the line holding data[at].
func lineIndent(data []byte, at int) string {
	start := bytes.LastIndexByte(data[:at], '\n') + 1
	end := start
	for end < at && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// indentUnit is the indentation of the top-level object's first member
// when it stands on a line of its own, else two spaces.
func indentUnit(data []byte) string {
	if _, top, err := objectAt(data, 0, "the settings"); err == nil && len(top) > 0 {
		at := top[0].keyAt
		if nl := bytes.LastIndexByte(data[:at], '\n'); nl >= 0 {
			if ws := data[nl+1 : at]; len(ws) > 0 && len(bytes.Trim(ws, " \t")) == 0 {
				return string(ws)
			}
		}
	}
	return "  "
}

// lookup finds key among members.
func lookup(members []member, key string) (member, int) {
	for i, m := range members {
		if m.key == key {
			return m, i
		}
	}
	return member{}, -1
}

// hookEntries finds the event's array in the settings' hooks: the members
// of the top-level object and of hooks, and the array's elements. Either
// index is -1 when there is no such member.
type hookEntries struct {
	sh               []byte // the document as parsed (shadow, for JSON with comments)
	jsonc            bool
	top, hooks       []member
	open, hopen      int // the '{' of the top-level object and of hooks
	hi, ei           int // hooks in top, the event in hooks
	elems            []span
	hasHooks, hasEvt bool
}

func findEvent(data []byte, event string, jsonc bool) (*hookEntries, error) {
	sh := data
	if jsonc {
		sh = shadow(data)
	}
	if err := check(sh); err != nil {
		return nil, err
	}
	h := &hookEntries{hi: -1, ei: -1, sh: sh, jsonc: jsonc}
	var err error
	if h.open, h.top, err = objectAt(sh, 0, "the settings"); err != nil {
		return nil, err
	}
	m, i := lookup(h.top, "hooks")
	if i < 0 {
		return h, nil
	}
	h.hi, h.hasHooks = i, true
	if h.hopen, h.hooks, err = objectAt(sh, m.start, "hooks"); err != nil {
		return nil, err
	}
	e, j := lookup(h.hooks, event)
	if j < 0 {
		return h, nil
	}
	h.ei, h.hasEvt = j, true
	if _, h.elems, err = arrayAt(sh, e.start, "hooks."+event); err != nil {
		return nil, err
	}
	return h, nil
}

// shadow is data with its comments (// to the end of the line, /* */)
// and its trailing commas (before a '}' or ']') blanked to spaces, the
// newlines kept: JSON of the same length, in which every offset is the
// offset in data. It is how settings a client reads as JSON with
// comments (Gemini CLI's, Qwen Code's) are parsed, while the edits go
// to data itself, every comment in place. An unterminated /* is left as
// it is, for the JSON check to refuse.
func shadow(data []byte) []byte {
	sh := append([]byte(nil), data...)
	blank := func(from, to int) {
		for k := from; k < to; k++ {
			if sh[k] != '\n' {
				sh[k] = ' '
			}
		}
	}
	inString, comma := false, -1
	for i := 0; i < len(sh); i++ {
		c := sh[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString, comma = true, -1
		case c == '/' && i+1 < len(sh) && sh[i+1] == '/':
			end := bytes.IndexByte(sh[i:], '\n')
			if end < 0 {
				end = len(sh) - i
			}
			blank(i, i+end)
			i += end - 1
		case c == '/' && i+1 < len(sh) && sh[i+1] == '*':
			end := bytes.Index(sh[i+2:], []byte("*/"))
			if end < 0 {
				return sh
			}
			blank(i, i+2+end+2)
			i += 2 + end + 1
		case c == ',':
			comma = i
		case c == '}' || c == ']':
			if comma >= 0 {
				sh[comma] = ' '
			}
			comma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			comma = -1
		}
	}
	return sh
}

// ours reports whether an entry of the event's array is reaper's — one
// whose hooks' command ends with HookMark and what it made — and its
// command and what it made.
func ours(entry []byte) (command, made string, ok bool) {
	// Keys exactly as the client reads them (encoding/json's struct
	// fields would take "HOOKS" for "hooks").
	var e map[string]json.RawMessage
	var hooks []map[string]json.RawMessage
	if json.Unmarshal(entry, &e) != nil || json.Unmarshal(e["hooks"], &hooks) != nil {
		return "", "", false
	}
	for _, h := range hooks {
		if json.Unmarshal(h["command"], &command) != nil {
			continue
		}
		for _, suffix := range []string{MadeFile, MadeHooks, MadeEvent, ""} {
			if strings.HasSuffix(command, HookMark+suffix) {
				return command, suffix, true
			}
		}
	}
	return "", "", false
}

// FindHook returns the command of reaper's hook in the settings'
// hooks.<event> array, and whether there is one.
func FindHook(data []byte, event string, jsonc bool) (string, bool, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return "", false, nil
	}
	h, err := findEvent(data, event, jsonc)
	if err != nil {
		return "", false, err
	}
	for _, e := range h.elems {
		if command, _, ok := ours(h.sh[e.start:e.end]); ok {
			return command, true, nil
		}
	}
	return "", false, nil
}

// HookBinary is the binary a hook's command (Command's shape, either
// OS's) runs.
func HookBinary(command string) string {
	if rest, ok := strings.CutPrefix(command, "Start-Process -WindowStyle Hidden -FilePath '"); ok {
		var b strings.Builder
		for i := 0; i < len(rest); i++ {
			if rest[i] != '\'' {
				b.WriteByte(rest[i])
				continue
			}
			if i+1 < len(rest) && rest[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String()
		}
		return "" // no closing quote: not Command's
	}
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(command), "("))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// AddHook adds reaper's entry to the settings' hooks.<event> array, made
// by entry from the mark its command must end with (HookMark and what was
// made). An entry of reaper's that is there already is kept when it is
// the same, and replaced when not (a binary that moved). Empty data is a
// new file. jsonc: the client reads the file as JSON with comments and
// trailing commas, which are then taken and kept (shadow).
func AddHook(data []byte, event string, entry func(mark string) string, jsonc bool) ([]byte, error) {
	// A new file — or one add made, its hook taken out again — is the
	// skeleton with the hook added as to any other file, marked MadeFile:
	// a second add finds it as it made it (unchanged), and remove gives
	// back the skeleton exactly.
	made := func(mark string) string {
		if mark == HookMark+MadeHooks {
			mark = HookMark + MadeFile
		}
		return entry(mark)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return addTo([]byte(Skeleton), event, made, jsonc)
	}
	base, err := RemoveHook(data, event, jsonc)
	if err != nil {
		return nil, err
	}
	with := entry
	if string(base) == Skeleton && bytes.Contains(data, []byte(HookMark+MadeFile)) {
		with = made
	}
	out, err := addTo(base, event, with, jsonc)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func addTo(data []byte, event string, entry func(string) string, jsonc bool) ([]byte, error) {
	h, err := findEvent(data, event, jsonc)
	if err != nil {
		return nil, err
	}
	switch {
	case !h.hasHooks:
		value := "{" + jsonString(event) + ": [" + entry(HookMark+MadeHooks) + "]}"
		return splice(data, h.open+1, h.open+1, memberText(data, h.sh, h.open, h.top, "hooks", value)), nil
	case !h.hasEvt:
		value := "[" + entry(HookMark+MadeEvent) + "]"
		return splice(data, h.hopen+1, h.hopen+1, memberText(data, h.sh, h.hopen, h.hooks, event, value)), nil
	}
	at := h.hooks[h.ei].start + 1 // after the array's '['
	if len(h.elems) == 0 {
		return splice(data, at, at, entry(HookMark)), nil
	}
	return splice(data, at, at, entry(HookMark)+", "), nil
}

// RemoveHook takes reaper's entries out of the settings' hooks.<event>,
// and with the last of them what add made for it; every other byte stays.
// Settings without such an entry are given back as they are.
func RemoveHook(data []byte, event string, jsonc bool) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return data, nil
	}
	for range 64 {
		h, err := findEvent(data, event, jsonc)
		if err != nil {
			return nil, err
		}
		i, made := -1, ""
		for k, e := range h.elems {
			if _, m, ok := ours(h.sh[e.start:e.end]); ok {
				i, made = k, m
				break
			}
		}
		if i < 0 {
			return data, nil
		}
		data = removeEntry(data, h, i, made, event)
	}
	return nil, errors.New("more than 64 of reaper's hooks: edit the settings by hand")
}

// removeEntry takes element i out of the event's array: as add put it
// when the bytes say so, else with the comma that joined it.
func removeEntry(data []byte, h *hookEntries, i int, made, event string) []byte {
	e, elems := h.elems[i], h.elems
	if len(elems) == 1 {
		// The last: the member add made goes as add put it in.
		if (made == MadeHooks || made == MadeFile) && len(h.hooks) == 1 {
			if out, ok := unsplice(data, h.sh, h.open, h.top, h.hi, "hooks"); ok {
				return out
			}
		}
		if made == MadeEvent || made == MadeHooks || made == MadeFile {
			if out, ok := unsplice(data, h.sh, h.hopen, h.hooks, h.ei, event); ok {
				return out
			}
		}
		return splice(data, e.start, e.end, "")
	}
	if i == 0 {
		if rest := data[e.end:]; bytes.HasPrefix(rest, []byte(", ")) {
			return splice(data, e.start, e.end+2, "")
		}
		return splice(data, e.start, elems[1].start, "")
	}
	return splice(data, elems[i-1].end, e.end, "")
}

// unsplice takes out member i of the object whose '{' is at open, when it
// is the first and stands exactly as memberText put it: with a comma and
// the same bytes before it as before the member after it, or, alone, after
// whitespace and followed by a line back at the indentation of the '{'.
func unsplice(data, sh []byte, open int, members []member, i int, key string) ([]byte, bool) {
	if i != 0 {
		return nil, false
	}
	m := members[0]
	before := data[open+1 : m.keyAt]
	if len(bytes.Trim(before, " \t\r\n")) != 0 || !bytes.Equal(data[m.keyAt:m.start], []byte(jsonString(key)+": ")) {
		return nil, false
	}
	if len(members) > 1 {
		next := members[1]
		if m.end >= len(data) || data[m.end] != ',' {
			return nil, false
		}
		// As memberText put it: the same bytes after the comma as before
		// the member, or, where a comment stood first, the member on a
		// line of its own at the next one's indentation.
		after := data[m.end+1 : next.keyAt]
		commented := !bytes.Equal(after, sh[m.end+1:next.keyAt]) && bytes.Equal(before, []byte("\n"+lineIndent(data, next.keyAt)))
		if !bytes.Equal(after, before) && !commented {
			return nil, false
		}
		return splice(data, open+1, m.end+1, ""), true
	}
	after := "\n" + lineIndent(data, open)
	if !bytes.HasPrefix(data[m.end:], []byte(after)) || len(before) == 0 || before[0] != '\n' {
		return nil, false
	}
	return splice(data, open+1, m.end+len(after), ""), true
}

// jsonString is s as a JSON string, HTML's characters left as they are:
// the user reads > and &, not \u003e and \u0026.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
