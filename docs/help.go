package docs

import (
	"embed"
	"strings"
)

//go:embed help/*.txt
var help embed.FS

// Help is the long help of the command named (its file help/NAME.txt:
// "scan", "ledger-show"), each {{KEY}} in it replaced by the value after
// KEY in vars (KEY, VALUE pairs): what only the binary knows, such as the
// clients it ships or the units setup writes. A name with no file, or a
// key left in the text, is a programming error and panics, at the
// command's making — so on every run of the tests.
func Help(name string, vars ...string) string {
	b, err := help.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("docs: no help for " + name + ": " + err.Error())
	}
	pairs := make([]string, 0, len(vars))
	for i := 0; i+1 < len(vars); i += 2 {
		pairs = append(pairs, "{{"+vars[i]+"}}", vars[i+1])
	}
	text := strings.NewReplacer(pairs...).Replace(strings.TrimSuffix(string(b), "\n"))
	if i := strings.Index(text, "{{"); i >= 0 {
		panic("docs: help for " + name + " leaves a key: " + text[i:min(len(text), i+24)])
	}
	return text
}
