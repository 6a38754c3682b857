package sqlitestore

import (
	"fmt"
	"strings"
)

// maxSchema bounds the schema rows read, and maxSQL the text of one:
// an OpenClaw store has some tens of each, of a few hundred bytes.
const (
	maxSchema = 10_000
	maxSQL    = 256 << 10
)

// object is one row of sqlite_schema (https://www.sqlite.org/schematab.html).
type object struct {
	typ, name string
	root      int64
	sql       string
}

// table is a plain table's layout, from its CREATE TABLE statement.
type table struct {
	cols    []column
	rowid   int  // the INTEGER PRIMARY KEY column, whose value is the rowid; -1 if none
	noRowid bool // WITHOUT ROWID: an index b-tree, which reaper does not read
	virtual bool
	gen     bool // a generated column: its value is not in the record
	bad     string
}

type column struct {
	name       string // lower case: SQL's names are case-insensitive
	hasDefault bool
}

// readSchema reads sqlite_schema, page 1's table.
func (p *pager) readSchema() ([]object, error) {
	var out []object
	vals := make([]Value, 5)
	err := p.walk(1, func(_ int64, rec []byte) error {
		if len(out) == maxSchema {
			return corrupt("more than %d schema rows", maxSchema)
		}
		if _, err := decodeRecord(rec, []int{0, 1, 2, 3, 4}, vals); err != nil {
			return err
		}
		if len(vals[4].Bytes) > maxSQL {
			return corrupt("a schema statement of %d bytes", len(vals[4].Bytes))
		}
		typ, _ := vals[0].String(16)
		name, _ := vals[1].String(maxSQL)
		root, _ := vals[3].Int64()
		sql, _ := vals[4].String(maxSQL)
		out = append(out, object{typ: typ, name: name, root: root, sql: sql})
		return nil
	})
	return out, err
}

// parseTable reads a CREATE TABLE statement's columns and options
// (https://www.sqlite.org/lang_createtable.html): their names, the
// INTEGER PRIMARY KEY that is the rowid, DEFAULTs, generated columns,
// WITHOUT ROWID. A statement it cannot follow sets bad: the table is not
// read.
func parseTable(sql string) *table {
	t := &table{rowid: -1}
	toks := tokenize(sql)
	i := 0
	word := func(w string) bool {
		if i < len(toks) && toks[i].is(w) {
			i++
			return true
		}
		return false
	}
	if !word("CREATE") {
		t.bad = "not a CREATE statement"
		return t
	}
	if word("VIRTUAL") {
		t.virtual = true
		return t
	}
	_ = word("TEMP") || word("TEMPORARY")
	if !word("TABLE") {
		t.bad = "not a CREATE TABLE statement"
		return t
	}
	if word("IF") && !(word("NOT") && word("EXISTS")) {
		t.bad = "IF without NOT EXISTS"
		return t
	}
	i++ // the name
	if i < len(toks) && toks[i].text == "." {
		i += 2 // schema.name
	}
	if i >= len(toks) || toks[i].text != "(" {
		t.bad = "a table made AS SELECT"
		return t
	}
	i++
	// The definitions, split at top-level commas.
	var defs [][]token
	start, depth := i, 0
	for ; i < len(toks); i++ {
		switch toks[i].text {
		case "(":
			depth++
		case ")":
			depth--
		}
		if depth < 0 || (depth == 0 && toks[i].text == ",") {
			defs = append(defs, toks[start:i])
			start = i + 1
		}
		if depth < 0 {
			break
		}
	}
	if depth >= 0 {
		t.bad = "no closing parenthesis"
		return t
	}
	for i++; i < len(toks); i++ {
		if toks[i].is("ROWID") {
			t.noRowid = true
		}
	}
	var pk []string
	for _, d := range defs {
		if len(d) == 0 {
			t.bad = "an empty definition"
			return t
		}
		if d[0].keyword(tableConstraint) {
			if d[0].is("PRIMARY") || (len(d) > 2 && d[2].is("PRIMARY")) {
				pk = pkColumns(d)
			}
			continue
		}
		c := column{name: strings.ToLower(d[0].text)}
		var typ []string
		j := 1
		for ; j < len(d) && d[j].word && !d[j].keyword(columnConstraint); j++ {
			typ = append(typ, strings.ToUpper(d[j].text))
		}
		integer := strings.Join(typ, " ") == "INTEGER"
		for ; j < len(d); j++ {
			if !d[j].word || d[j].quoted {
				continue
			}
			switch strings.ToUpper(d[j].text) {
			case "DEFAULT":
				c.hasDefault = true
			case "GENERATED", "AS":
				t.gen = true
			case "PRIMARY":
				desc := j+2 < len(d) && d[j+2].is("DESC")
				if integer && !desc {
					t.rowid = len(t.cols)
				}
			}
		}
		t.cols = append(t.cols, c)
	}
	if len(pk) == 1 && t.rowid < 0 {
		for k, c := range t.cols {
			if c.name == pk[0] && typeOf(defs, k) == "INTEGER" {
				t.rowid = k
			}
		}
	}
	return t
}

// tableConstraint and columnConstraint are the words that begin a table's
// constraint and end a column's type.
var (
	tableConstraint  = map[string]bool{"CONSTRAINT": true, "PRIMARY": true, "UNIQUE": true, "CHECK": true, "FOREIGN": true}
	columnConstraint = map[string]bool{"CONSTRAINT": true, "PRIMARY": true, "NOT": true, "NULL": true, "UNIQUE": true, "CHECK": true,
		"DEFAULT": true, "COLLATE": true, "REFERENCES": true, "GENERATED": true, "AS": true}
)

// typeOf is the declared type of the k-th column definition, upper case.
func typeOf(defs [][]token, k int) string {
	n := -1
	for _, d := range defs {
		if d[0].keyword(tableConstraint) {
			continue
		}
		if n++; n != k {
			continue
		}
		var typ []string
		for j := 1; j < len(d) && d[j].word && !d[j].keyword(columnConstraint); j++ {
			typ = append(typ, strings.ToUpper(d[j].text))
		}
		return strings.Join(typ, " ")
	}
	return ""
}

// pkColumns are the names in PRIMARY KEY (a, b …).
func pkColumns(d []token) []string {
	var out []string
	k := 0
	for k < len(d) && d[k].text != "(" {
		k++
	}
	for k++; k < len(d) && d[k].text != ")"; k++ {
		if d[k].text == "," {
			continue
		}
		if k > 0 && (d[k-1].text == "(" || d[k-1].text == ",") {
			out = append(out, strings.ToLower(d[k].text))
		}
	}
	return out
}

// token is one SQL token: a word (a keyword or a name, quotes taken off)
// or one character of punctuation; a string literal is neither.
type token struct {
	text   string
	word   bool
	quoted bool // a name in quotes: never a keyword
}

// is reports whether t is the keyword w.
func (t token) is(w string) bool { return t.word && !t.quoted && strings.EqualFold(t.text, w) }

// keyword reports whether t is one of the keywords in set.
func (t token) keyword(set map[string]bool) bool {
	return t.word && !t.quoted && set[strings.ToUpper(t.text)]
}

// tokenize splits SQL into tokens, its comments dropped
// (https://www.sqlite.org/lang_keywords.html for the quotes of a name).
func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if e := strings.Index(s[i+2:], "*/"); e >= 0 {
				i += e + 4
			} else {
				i = len(s)
			}
		case c == '"' || c == '`' || c == '[' || c == '\'':
			end := c
			if c == '[' {
				end = ']'
			}
			var b strings.Builder
			j := i + 1
			for ; j < len(s); j++ {
				if s[j] == end {
					if end != ']' && j+1 < len(s) && s[j+1] == end {
						b.WriteByte(end)
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			out = append(out, token{text: b.String(), word: c != '\'', quoted: true})
			i = j + 1
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			out = append(out, token{text: s[i:j], word: true})
			i = j
		default:
			out = append(out, token{text: s[i : i+1]})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// columnIndex maps names to the table's columns; an unknown name is an
// error, as SQLite's "no such column".
func (t *table) columnIndex(name string, names []string) ([]int, error) {
	idx := make([]int, len(names))
	for j, n := range names {
		idx[j] = -1
		for k, c := range t.cols {
			if c.name == strings.ToLower(n) {
				idx[j] = k
				break
			}
		}
		if idx[j] < 0 {
			return nil, fmt.Errorf("%s has no column %s", name, n)
		}
	}
	return idx, nil
}
