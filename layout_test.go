// Package reaper_test holds the repository's structural rules, checked
// over every package from the module's root.
package reaper_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client/all"
)

const (
	module = "github.com/orphanreaper/reaper/"
	// list is the one package that lists the agent clients' adapters.
	list = "client/all"
)

// adapters are the agent clients' adapter packages, as the list imports
// them: every package under client/ that client/all imports.
func adapters(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(list, "all.go"), nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if a, ok := strings.CutPrefix(p, module+"client/"); ok {
			out["client/"+a] = true
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no adapter", list)
	}
	return out
}

// platform reports whether the package at rel is platform or one of its
// packages (the table, the kill path, host facts, the reader child).
func platform(rel string) bool {
	return rel == "platform" || strings.HasPrefix(rel, "platform/")
}

// The repository's structural rules, enforced rather than hoped:
// one doc.go with the package comment per package; only platform talks to
// the OS — through syscall, x/sys, gopsutil and go-systemd, and by a
// /proc/ path — (the measuring tools in scripts/ and the tests' support in
// internal/ and client/clienttest aside); only the list (client/all) imports an agent client's
// adapter, and only cmd imports the list; policy imports no client; cmd
// imports neither scan, gather nor platform (it maps flags to run, setup
// and doctor), but for the names of the signals it catches
// (platform/signals);
// nothing shells out but doctor's questions to the service manager, in
// platform.
func TestLayout(t *testing.T) {
	root := "."
	adapters := adapters(t)
	osOnly := []string{"syscall", "golang.org/x/sys", "github.com/shirou/gopsutil", "github.com/coreos/go-systemd"}
	dirs := map[string][]string{} // package dir → its non-test Go files
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for dir, files := range dirs {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel) // as import paths spell it, on Windows too
		docs := 0
		for _, path := range files {
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			// scripts/ holds the tools that measure reaper (the stat-only
			// floor), not reaper; internal/ and client/clienttest are the
			// tests' support (a FIFO, the real clients' installs).
			osFree := !platform(rel) && !strings.HasPrefix(rel, "scripts/") &&
				!strings.HasPrefix(rel, "internal/") && rel != "client/clienttest"
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && osFree && strings.Contains(lit.Value, "/proc/") {
					t.Errorf("%s: %s names a /proc/ path: only platform reads the kernel's files", fset.Position(lit.Pos()), lit.Value)
				}
				return true
			})
			if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package ") || f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Command ") {
				docs++
				if filepath.Base(path) != "doc.go" && f.Name.Name != "main" {
					t.Errorf("%s: the package comment belongs in doc.go", path)
				}
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, o := range osOnly {
					if (p == o || strings.HasPrefix(p, o+"/")) && osFree {
						t.Errorf("%s imports %s: only platform and its packages talk to the OS", path, p)
					}
				}
				// The client seam: only the list imports an agent client's
				// adapter, only cmd the list, and policy no client at all.
				a, ours := strings.CutPrefix(p, module)
				switch {
				case ours && adapters[a] && rel != list:
					t.Errorf("%s imports the adapter %s: only %s lists adapters; scan, gather and the rest know no client by name", path, a, list)
				case ours && a == list && !strings.HasPrefix(rel, "cmd/"):
					t.Errorf("%s imports %s: only cmd does; every package below receives a client.Set", path, list)
				case ours && strings.HasPrefix(a, "client") && rel == "policy":
					t.Errorf("%s imports %s: policy is given the clients' owner names and marks as values", path, a)
				case ours && strings.HasPrefix(rel, "cmd/") && (a == "scan" || a == "run/gather" || platform(a) && a != "platform/signals"):
					t.Errorf("%s imports %s: cmd maps flags to run, setup and doctor, and reads no table or state of its own", path, a)
				}
				// platform/host's service files run systemctl or launchctl,
				// for reaper doctor and reaper service alone; its command_
				// files the user's command reaper run wraps; its desktop_
				// files the desktop's own notifier (notify-send,
				// osascript) for watch --notify where no session bus answers.
				// internal/ is test support, which no product code imports.
				test := strings.HasPrefix(rel, "internal/")
				if ours && strings.HasPrefix(a, "internal/") && !test {
					t.Errorf("%s imports %s: internal/ is for the tests", path, a)
				}
				host := rel == "platform/host"
				base := filepath.Base(path)
				if p == "os/exec" && !test && !(host && (strings.HasPrefix(base, "service_") || strings.HasPrefix(base, "command_") || strings.HasPrefix(base, "desktop_"))) {
					t.Errorf("%s imports os/exec: reaper reads state, it never shells out", path)
				}
			}
		}
		if docs != 1 {
			t.Errorf("package %s has %d package comments, want exactly one", rel, docs)
		}
	}
}

// scan and reap know no client by name: not in their code, not in their
// comments. The names are the listed clients' own (their Info), so a new
// client of the list is held here the day it lands.
func TestScanAndReapNameNoClient(t *testing.T) {
	// Whole words: a name as short as pi's is in every "pid", and the
	// first word of "Continue CLI" is Go's continue — a title's words are
	// matched as written (capitalised), a name in lower case.
	var words []*regexp.Regexp
	for _, c := range all.Clients.All() {
		in := c.Info()
		first, _, _ := strings.Cut(in.Title, " ")
		for _, w := range []string{"(?i)" + regexp.QuoteMeta(in.Name), "(?i)" + regexp.QuoteMeta(in.Title), regexp.QuoteMeta(first)} {
			words = append(words, regexp.MustCompile(`(^|[^A-Za-z0-9_.-])`+w+`($|[^A-Za-z0-9_-])`))
		}
	}
	for _, dir := range []string{"scan", "reap"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range words {
				if m := w.FindString(string(b)); m != "" {
					t.Errorf("%s names the client %q: scan and reap know none", f, strings.TrimSpace(m))
				}
			}
		}
	}
}

// The README is the front page: what reaper is, a report, how it decides,
// how to install it and what it costs, in at most 250 lines; the rest is
// in docs/ (docs/reference.md holds what it summarises).
func TestReadmeFitsTheFrontPage(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines, want at most 250: move what grew into docs/", n)
	}
}

// mdLink is a Markdown link's target: [text](target) or [text](target#anchor).
var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)

// codeSpan is what a Markdown file shows as code, fenced or inline: no
// link is taken from it.
var codeSpan = regexp.MustCompile("(?s)```.*?```|`[^`]*`")

// TestDocLinksResolve: every relative link in the repository's Markdown
// (the README, docs/, each package's) names a file or folder that exists,
// from the file that holds it. The control: a link made to a file that is
// not there is caught.
func TestDocLinksResolve(t *testing.T) {
	broken := func(file, text string) []string {
		var out []string
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(file), target)); err != nil {
				out = append(out, target)
			}
		}
		return out
	}
	if got := broken("docs/x.md", "see [it](docs/reference.md) and [this](reference.md#top)"); len(got) != 1 || got[0] != "docs/reference.md" {
		t.Fatalf("control: broken links found %q, want the one to docs/docs/reference.md", got)
	}
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "dist") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("control: %d Markdown files found: the walk missed the docs", len(files))
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range broken(file, string(b)) {
			t.Errorf("%s links to %s, which is not there", file, target)
		}
	}
}

// Where reaper keeps its files is said once, in paths: no other package's
// code spells one of its paths (comments may name them; packaging ships
// the units and the man page, which name them as installed). The control:
// paths itself spells every one.
func TestPathsSaidOnce(t *testing.T) {
	literals := []string{"/etc/reaper", "/run/reaper", "/var/log/reaper", "reaper.lock", ".seen", ".stopped", ".respawns", ".watch", `"Logs"`, `"log", "reaper"`}
	spelled := func(path string) map[string]bool {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				for _, l := range literals {
					if strings.Contains(lit.Value, strings.Trim(l, `"`)) && (l[0] != '"' || strings.Contains(lit.Value, l)) {
						out[l] = true
					}
				}
			}
			return true
		})
		return out
	}
	if got := spelled(filepath.Join("paths", "paths.go")); len(got) < 8 {
		t.Fatalf("control: paths/paths.go spells %v, want the paths", got)
	}
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "paths", "packaging", "internal", "scripts", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for l := range spelled(path) {
			t.Errorf("%s spells %s: where reaper keeps its files is paths' to say", path, l)
		}
		return nil
	})
}

// platform declares each of its exported functions once, in a file every
// OS builds (its seam.go), with its doc; what an OS implements is
// lowercase, in the files named for it. The control: a package whose
// function is declared in two files is found.
func TestPlatformDeclaresOnce(t *testing.T) {
	declared := func(dir string) map[string][]string {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		out := map[string][]string{}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range af.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() {
					continue
				}
				name := fd.Name.Name
				if fd.Recv != nil { // a method: Type.Name
					rt := fd.Recv.List[0].Type
					if st, ok := rt.(*ast.StarExpr); ok {
						rt = st.X
					}
					id, ok := rt.(*ast.Ident)
					if !ok {
						continue
					}
					name = id.Name + "." + name
				}
				out[name] = append(out[name], f)
				if fd.Doc == nil && fd.Recv == nil {
					t.Errorf("%s: %s has no doc", f, fd.Name.Name)
				}
			}
			if b, _ := os.ReadFile(f); filepath.Base(f) == "seam.go" && strings.HasPrefix(string(b), "//go:build") {
				t.Errorf("%s has a build constraint: a seam is every OS's", f)
			}
		}
		return out
	}
	ctrl := t.TempDir()
	for _, f := range []string{"a_linux.go", "a_other.go"} {
		os.WriteFile(filepath.Join(ctrl, f), []byte("package a\n\n// F is f.\nfunc F() {}\n\n// M is m.\nfunc (t *T) M() {}\n"), 0o644)
	}
	if got := declared(ctrl); len(got["F"]) != 2 || len(got["T.M"]) != 2 {
		t.Fatalf("control: F found in %v, T.M in %v, want two files each", got["F"], got["T.M"])
	}
	for _, dir := range []string{"platform", "platform/kill", "platform/host", "platform/child", "platform/watch", "platform/signals"} {
		for name, files := range declared(dir) {
			if len(files) > 1 {
				t.Errorf("platform's %s is declared in %d files (%v): declare it once, in the seam, and implement it per OS in lowercase (a method too)", name, len(files), files)
			}
		}
	}
}

// platform's fallbacks are named one way: a file whose build tag leaves
// systems out (a negation) is TOPIC_fallback.go, and a fallback's tag
// says which systems it covers.
func TestFallbacksNamedOneWay(t *testing.T) {
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		tag, _, _ := strings.Cut(string(b), "\n")
		tag, tagged := strings.CutPrefix(tag, "//go:build ")
		fallback := strings.HasSuffix(path, "_fallback.go")
		switch {
		case fallback && (!tagged || !strings.HasPrefix(tag, "!") && !strings.Contains(tag, "&& !")):
			t.Errorf("%s is a fallback whose build tag (%q) says no systems it leaves out", path, tag)
		case !fallback && tagged && strings.HasPrefix(tag, "!"):
			t.Errorf("%s answers for the systems its tag %q covers: name it TOPIC_fallback.go", path, tag)
		}
		return nil
	})
}

// cmd/reaper is flags, errors and printing (docs/design.md): at most
// 2,000 lines and no file over 250, so that what a command does lives in
// the packages below it, where it is tested without the binary.
func TestCmdStaysThin(t *testing.T) {
	files, err := filepath.Glob("cmd/reaper/*.go")
	if err != nil || len(files) < 10 {
		t.Fatalf("control: %d files of cmd/reaper found (%v)", len(files), err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(string(b), "\n")
		total += n
		if n > 250 {
			t.Errorf("%s has %d lines, want at most 250", f, n)
		}
	}
	if total > 2000 {
		t.Errorf("cmd/reaper has %d lines outside its tests, want at most 2,000: move what a command does below it", total)
	}
}

// Above platform, a file named for an OS holds no OS call (TestLayout: no
// syscall, x/sys, gopsutil or go-systemd outside platform and the tests'
// support): it says what reaper does on that OS from platform's seams,
// which every OS has. They are these, each with its reason; a new one is
// added here, said why.
var perOSAbovePlatform = map[string]string{
	"doctor/platform_linux.go":  "doctor's checks of a Linux host (pidfds, cgroup v2, capabilities, systemd's units), from platform/kill's and platform/host's seams",
	"doctor/platform_darwin.go": "doctor's checks of a Mac (no pidfds, launchd's jobs), from platform/host's seams",
	"notify/desktop_darwin.go":  "the Mac's notifier, Notification Center through osascript (platform/host runs it)",
	"notify/desktop_unix.go":    "the freedesktop notifier: a D-Bus call (godbus, a protocol over a socket), notify-send through platform/host where no session bus answers",
	// Test support, which TestLayout leaves to call the OS: a FIFO the
	// adapters' tests plant where a client's file would be.
	"client/clienttest/fifo_unix.go": "test support: syscall.Mkfifo, for the tests' FIFOs",
}

func TestPerOSFilesAbovePlatform(t *testing.T) {
	osName := regexp.MustCompile(`_(linux|darwin|windows|freebsd|other|unix)\.go$`)
	found := map[string]bool{}
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && (platform(filepath.ToSlash(path)) || d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") || !osName.MatchString(path) {
			return err
		}
		found[filepath.ToSlash(path)] = true
		if _, ok := perOSAbovePlatform[filepath.ToSlash(path)]; !ok {
			t.Errorf("%s: a file above platform named for an OS; put the OS's part in platform behind a seam, or list it in perOSAbovePlatform with why it holds no OS call", path)
		}
		return nil
	})
	for f := range perOSAbovePlatform {
		if !found[f] {
			t.Errorf("perOSAbovePlatform lists %s, which is not there (or not named for an OS): take it out", f)
		}
	}
}

// TestNoExpressionCompiledAtInit: no package-level variable of reaper's is
// a regular expression compiled as the package initialises — each start
// paid for every one, whatever the verb. One is compiled on first use
// (sync.OnceValue, scan.MustPattern): a call inside a function literal is
// not made at init. The control finds one in a file made for it.
func TestNoExpressionCompiledAtInit(t *testing.T) {
	atInit := func(name string, src any) []string {
		f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			ast.Inspect(g, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncLit:
					return false // made when called, not at init
				case *ast.CallExpr:
					if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
						if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "regexp" && strings.Contains(sel.Sel.Name, "Compile") {
							out = append(out, sel.Sel.Name)
						}
					}
				}
				return true
			})
		}
		return out
	}
	if got := atInit("control.go", "package p\nimport \"regexp\"\nvar (\n\ta = regexp.MustCompile(`a`)\n\tb = func() any { return regexp.MustCompile(`b`) }\n)\n"); len(got) != 1 {
		t.Fatalf("control: %v, want the one compiled at init", got)
	}
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// internal/ and scripts/ are the tests' support and tools,
			// never linked into reaper.
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || path == "scripts" || path == "internal") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		n++
		for _, call := range atInit(path, nil) {
			t.Errorf("%s: regexp.%s at package init: compile it on first use (sync.OnceValue)", path, call)
		}
		return nil
	})
	if err != nil || n < 100 {
		t.Fatalf("control: %d files read (%v)", n, err)
	}
}
