package policy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The expressions the line scanners stand for (lines.go).
var (
	arrayHeaderRE = regexp.MustCompile(`^\s*\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]`)
	tableHeaderRE = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]`)
	keyLineRE     = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+|"[^"]*"|'[^']*')\s*=`)
)

// checkScanners holds each scanner to its expression on line.
func checkScanners(t *testing.T, line string) {
	for _, c := range []struct {
		name string
		re   *regexp.Regexp
		scan func(string) (string, bool)
	}{{"array header", arrayHeaderRE, arrayHeader}, {"table header", tableHeaderRE, tableHeader}, {"key line", keyLineRE, keyLine}} {
		got, ok := c.scan(line)
		m := c.re.FindStringSubmatch(line)
		if ok != (m != nil) || ok && got != m[1] {
			t.Errorf("%s of %q: %q %v, the expression %q", c.name, line, got, ok, m)
		}
	}
}

// TestLineScanners: the scanners find what their expressions find, on
// every line of the policies in the tree and on lines made to tell them
// apart.
func TestLineScanners(t *testing.T) {
	lines := []string{"", " ", "[[rule]]", "  [[ rule ]] # c", "[[rule]", "[rule]]", "[rule", "[ a.b-c_1 ]", "[]", "[[]]",
		"[\t[rule]]", "\f[x]", "\v[x]", "key = 1", "key=1", "key", `"quoted key" = 1`, `'single' = 2`, `"a"b = 1`, `"open = 1`,
		"dotted.key = 1", "-k_ = x", "= 1", " \t k \t = v", "k\v= 1", "[[a.b]] x", "ключ = 1", "[ключ]"}
	files, _ := filepath.Glob(filepath.Join("..", "packaging", "*.toml"))
	more, _ := filepath.Glob(filepath.Join("..", "testdata", "*", "*.toml"))
	files = append(files, append(more, "default.toml")...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines = append(lines, strings.Split(string(b), "\n")...)
	}
	if len(lines) < 200 {
		t.Fatalf("%d lines: the policies were not found", len(lines))
	}
	for _, l := range lines {
		checkScanners(t, l)
	}
}

// FuzzLineScanners: any line, the scanners and their expressions agree.
func FuzzLineScanners(f *testing.F) {
	for _, s := range []string{"[[rule]]", "[a]", `"k" = 1`, "k=", " [[ x.y ]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) { checkScanners(t, line) })
}
