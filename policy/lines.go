package policy

import (
	"strconv"
	"strings"
)

// lineIndex maps keys of a TOML document to the lines they are on. The TOML
// decoder reports positions for syntax errors only, and for a key inside an
// array of tables ([[rule]]) it keeps just the last occurrence; this index
// knows which [[rule]] a key belongs to, so validation errors can say
// FILE:LINE. It understands what policies use: [table] and [[array]]
// headers, key = value lines, multi-line strings and arrays.
type lineIndex map[string]int

// The lines the index knows, as regular expressions (the tests hold the
// scanners below to them; a scan of the embedded policy at every start is
// not worth compiling three expressions for):
//
//	array header  ^\s*\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]
//	table header  ^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]
//	key line      ^\s*([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=

// arrayHeader is the name of an array header line.
func arrayHeader(line string) (string, bool) { return header(line, "[[", "]]") }

// tableHeader is the name of a table header line.
func tableHeader(line string) (string, bool) { return header(line, "[", "]") }

// header is the name between open and close that begins line.
func header(line, open, close string) (string, bool) {
	rest, ok := strings.CutPrefix(skipSpace(line), open)
	if !ok {
		return "", false
	}
	name, rest := cutName(skipSpace(rest), true)
	return name, name != "" && strings.HasPrefix(skipSpace(rest), close)
}

// keyLine is the key of a key = value line, its quotes kept.
func keyLine(line string) (string, bool) {
	s := skipSpace(line)
	var key string
	switch {
	case s != "" && (s[0] == '"' || s[0] == '\''):
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return "", false
		}
		key = s[:end+2]
	default:
		key, _ = cutName(s, false)
	}
	return key, key != "" && strings.HasPrefix(skipSpace(s[len(key):]), "=")
}

// skipSpace drops leading \s: space, tab, newline, form feed, carriage
// return (Go's Perl class \s, https://pkg.go.dev/regexp/syntax).
func skipSpace(s string) string {
	return strings.TrimLeft(s, " \t\n\f\r")
}

// cutName cuts the leading run of [A-Za-z0-9_-] (and '.' when dots).
func cutName(s string, dots bool) (name, rest string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || dots && c == '.') {
			break
		}
		i++
	}
	return s[:i], s[i:]
}

func indexLines(src string) lineIndex {
	idx := lineIndex{}
	counts := map[string]int{}
	table := ""
	inMultiline := ""
	for n, line := range strings.Split(src, "\n") {
		lineNo := n + 1
		if inMultiline != "" {
			if strings.Count(line, inMultiline)%2 == 1 {
				inMultiline = ""
			}
			continue
		}
		if name, ok := arrayHeader(line); ok {
			table = name + "#" + strconv.Itoa(counts[name])
			counts[name]++
			idx[table] = lineNo
		} else if name, ok := tableHeader(line); ok {
			table = name
			idx[table] = lineNo
		} else if k, ok := keyLine(line); ok {
			key := strings.Trim(k, `"'`)
			if table != "" {
				key = table + "." + key
			}
			if _, dup := idx[key]; !dup {
				idx[key] = lineNo
			}
		}
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(line, q)%2 == 1 {
				inMultiline = q
			}
		}
	}
	return idx
}

// line returns the line of key in the i-th table of an array (i < 0 for a
// plain table or the top level), falling back to the table's header.
func (idx lineIndex) line(table string, i int, key string) int {
	t := table
	if i >= 0 {
		t = table + "#" + strconv.Itoa(i)
	}
	full := key
	if t != "" {
		full = t + "." + key
	}
	if n, ok := idx[full]; ok && key != "" {
		return n
	}
	if t == "" && key != "" {
		// A top-level key that is a table's name: its header's line
		// ([[rules]], the plural misspelled, at its first).
		if n, ok := idx[key+"#0"]; ok {
			return n
		}
	}
	return idx[t]
}
