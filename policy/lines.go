package policy

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// lineIndex maps keys of a TOML document to the lines they are on. The TOML
// decoder reports positions for syntax errors only, and for a key inside an
// array of tables ([[rule]]) it keeps just the last occurrence; this index
// knows which [[rule]] a key belongs to, so validation errors can say
// FILE:LINE. It understands what policies use: [table] and [[array]]
// headers, key = value lines, multi-line strings and arrays.
type lineIndex map[string]int

var (
	arrayHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]`) })
	tableHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]`) })
	keyLine     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=`) })
)

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
		if m := arrayHeader().FindStringSubmatch(line); m != nil {
			table = m[1] + "#" + strconv.Itoa(counts[m[1]])
			counts[m[1]]++
			idx[table] = lineNo
		} else if m := tableHeader().FindStringSubmatch(line); m != nil {
			table = m[1]
			idx[table] = lineNo
		} else if m := keyLine().FindStringSubmatch(line); m != nil {
			key := strings.Trim(m[1], `"'`)
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
