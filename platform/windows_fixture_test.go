package platform_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// The recorded Windows tables decide on any OS as on Windows: an orphan is
// a process whose recorded parent is gone or younger than itself, its
// tree found whole, a live session's servers never, and a reused pid is
// never taken for the parent.
func TestWindowsTables(t *testing.T) {
	for _, tt := range []struct {
		file string
		want []string
	}{
		{"claude-terminal.json", []string{
			"2300 mcp orphaned-mcp [reparented,untracked] [2300 2310] reported",
			"2400 mcp orphaned-mcp [reparented,untracked] [2400 2410] reported",
		}},
		{"pid-reused.json", []string{
			"5100 mcp orphaned-mcp [reparented,untracked] [5100 5110] reported",
		}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			s, err := platform.ReadWindowsTable(filepath.Join("..", "testdata", "windows", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := summaryAs(s, 1001); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Windows' shapes have their kinds: the pseudo-console host
// (conhost.exe --headless) is the PTY, npm's cmd.exe shims of MCP servers
// are MCP servers; a Git Bash left on a dead client's pseudo console is a
// tree of its own, of no kind a rule names without more.
func TestWindowsKinds(t *testing.T) {
	s, err := platform.ReadWindowsTable(filepath.Join("..", "testdata", "windows", "claude-terminal.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := scan.Scan(s, policy.Default(policy.Clients{}).ScanConfig(), nil)
	got := map[int]scan.Kind{}
	for _, f := range res.Findings {
		got[f.Root.PID] = f.Kind
	}
	for pid, kind := range map[int]scan.Kind{2250: scan.KindPTY, 2260: scan.KindOther, 2300: scan.KindMCP, 2400: scan.KindMCP} {
		if got[pid] != kind {
			t.Errorf("pid %d: kind %q, want %q (findings' kinds %v)", pid, got[pid], kind, got)
		}
	}
}

// The orphan's sign and its words: the dead parent's pid, and whether it
// names a younger process now.
func TestWindowsParentGone(t *testing.T) {
	s, err := platform.ReadWindowsTable(filepath.Join("..", "testdata", "windows", "pid-reused.json"))
	if err != nil {
		t.Fatal(err)
	}
	for pid, gone := range map[int]bool{5100: true, 5110: false, 5000: false, 1000: true, 4: false} {
		if got := s.Get(pid).ParentGone(); got != gone {
			t.Errorf("pid %d: ParentGone %v, want %v", pid, got, gone)
		}
	}
	if !s.NoReparenting || !s.WallClockStarts() {
		t.Errorf("a Windows table: NoReparenting %v, wall-clock starts %v", s.NoReparenting, s.WallClockStarts())
	}
	if got := s.Cmdline(s.Get(5100)); len(got) != 2 || got[0] != `C:\Program Files\nodejs\node.exe` {
		t.Errorf("argv %q: want node.exe's path whole, then the script", got)
	}
	res, _ := scan.Scan(s, policy.Default(policy.Clients{}).ScanConfig(), nil)
	var words []string
	for _, f := range res.Findings {
		if f.Root.PID == 5100 {
			words = f.Evidence
		}
	}
	if len(words) == 0 || !strings.Contains(words[0], "its parent 5000 exited; the pid now names a younger process (notepad.exe") {
		t.Errorf("the orphan's evidence %q: want its dead parent's pid, and notepad.exe named as younger", words)
	}
}

func TestSplitCommandLine(t *testing.T) {
	// The C runtime's rules (learn.microsoft.com, "Parsing C++
	// command-line arguments"), after a program name.
	for in, want := range map[string][]string{
		`prog "a b c" d e`:            {"prog", "a b c", "d", "e"},
		`prog "ab\"c" "\\" d`:         {"prog", `ab"c`, `\`, "d"},
		`prog a\\\b d"e f"g h`:        {"prog", `a\\\b`, "de fg", "h"},
		`prog a\\\"b c d`:             {"prog", `a\"b`, "c", "d"},
		`prog a\\\\"b c" d e`:         {"prog", `a\\b c`, "d", "e"},
		`prog a"b"" c d`:              {"prog", `ab" c d`},
		`"C:\Program Files\x.exe" -v`: {`C:\Program Files\x.exe`, "-v"},
		`C:\a\b.exe`:                  {`C:\a\b.exe`},
	} {
		if got := platform.SplitCommandLine(in); !reflect.DeepEqual(got, want) {
			t.Errorf("SplitCommandLine(%s) = %q, want %q", in, got, want)
		}
	}
}
