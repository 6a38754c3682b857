package audit

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	hostiles "github.com/orphanreaper/reaper/internal/hostile"
)

// TestSinks: the one hostile set through every sink's one function, and
// through the writers that use them — terminal (Term, the ps table),
// JSON, metric labels (MetricsText), journald (its entries, MESSAGE and
// fields). None writes a secret, a control or a byte that is not UTF-8,
// or a line past the sink's bound. The control: the same strings raw
// fail the check.
func TestSinks(t *testing.T) {
	for _, h := range hostiles.Strings {
		t.Run(h.Name, func(t *testing.T) {
			s := h.S
			if h.Name != "64 KiB name" {
				hostiles.Control(t, s)
			}
			hostiles.Check(t, "Term", Term(s, maxText), maxText+64)

			var js bytes.Buffer
			if err := WriteJSON(&js, &Report{Findings: []Finding{{Cmdline: UserText(s, MaxCmdline), Owner: UserText(s, MaxName)}}}); err != nil {
				t.Fatal(err)
			}
			var back Report
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatalf("JSON: %v", err)
			}
			hostiles.Check(t, "JSON", js.String(), 6*MaxCmdline)

			var rep Report
			w := &WatchMetrics{Passes: map[string]uint64{}, Copies: []ServerCopies{{Name: s, Command: s, User: "bob", Copies: 2}, {Command: s, User: "bob", Copies: 2}},
				Storms: []Storm{{PID: 7, Comm: s, User: s, Seen: s}}}
			text := string(MetricsText(&rep, nil, 0, w, time.Time{}))
			hostiles.Check(t, "metric labels", text, 512)
			for _, line := range strings.Split(text, "\n") {
				if strings.HasPrefix(line, "reaper_server_copies{") && strings.Contains(line, "mcp.internal.example") && !strings.Contains(line, "[REDA") {
					t.Errorf("a command line became a label: %s", line)
				}
			}

			v := &PSView{Sessions: []PSSession{{Client: "claude-code", Title: s, Version: s, PID: 9, SessionID: s, Processes: []PSProcess{
				{PID: 9, Kind: "client", Cmdline: s}, {PID: 10, PPID: 9, Depth: 1, Kind: "mcp", Name: s, Cmdline: s}}}},
				Copies: []ServerCopies{{Command: s, Name: s, User: s, Copies: 2, Advice: s}}}
			var tb bytes.Buffer
			if err := v.WriteTable(&tb, Style{}); err != nil {
				t.Fatal(err)
			}
			hostiles.Check(t, "ps table", tb.String(), 4*maxText)

			for _, e := range journalEntries(&Report{Findings: []Finding{{Cmdline: s, Owner: s, Detail: s, User: s, Rule: s}}}, []Record{{Signal: "SIGTERM", Result: s, Via: s}}) {
				hostiles.Check(t, "journald MESSAGE", e.msg, maxText+64)
				for k, v := range e.fields {
					// Binary-safe fields: no escaping, but redacted and bounded.
					if strings.Contains(v, hostiles.Secret) || len(v) > maxText+8 {
						t.Errorf("journald %s: %d bytes, %.100q", k, len(v), v)
					}
				}
			}
		})
	}
}

// TestServerLabel: a server's label is its config's name, else its
// program's base name past the launchers, else a hash — never a URL.
func TestServerLabel(t *testing.T) {
	for _, tt := range []struct{ name, command, want string }{
		{"docs", "npx -y @acme/docs", "docs"},
		{"", "npm exec mcp-remote https://mcp.example/sse?token=x", "mcp-remote"},
		{"", "npx -y @modelcontextprotocol/server-filesystem@1.2 /tmp", "@modelcontextprotocol/server-filesystem"},
		{"", "node /usr/lib/node_modules/mcp-remote/dist/proxy.js https://x", "mcp-remote"},
		{"", "uvx mcp-server-git --repository .", "mcp-server-git"},
		{"", "/opt/bin/my-server --port 1", "my-server"},
		{"", "npx https://evil.example/?token=x", ""},
	} {
		got := ServerLabel(tt.name, tt.command)
		if tt.want == "" {
			if !strings.HasPrefix(got, "cmd-") || strings.Contains(got, "evil") {
				t.Errorf("ServerLabel(%q, %q) = %q, want a hash", tt.name, tt.command, got)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("ServerLabel(%q, %q) = %q, want %q", tt.name, tt.command, got, tt.want)
		}
	}
}

// TestSeriesPerUser: one user's 64 servers make MaxSeriesPerUser series
// and one more; another user's server is still its own series.
func TestSeriesPerUser(t *testing.T) {
	w := &WatchMetrics{Passes: map[string]uint64{}}
	for i := range 64 {
		w.Copies = append(w.Copies, ServerCopies{Name: strings.Repeat("x", 60000) + string(rune('A'+i%26)) + string(rune('a'+i/26)), User: "adva", Copies: 2})
	}
	w.Copies = append(w.Copies, ServerCopies{Name: "mine", User: "advb", Copies: 2})
	var rep Report
	text := string(MetricsText(&rep, nil, 0, w, time.Time{}))
	if n := strings.Count(text, "reaper_server_copies{"); n > MaxSeriesPerUser+2 {
		t.Errorf("%d server series from one user's 64 servers, want at most %d and the other user's", n, MaxSeriesPerUser+2)
	}
	if !strings.Contains(text, `reaper_server_copies{server="mine",user="advb"} 2`) {
		t.Error("the other user's server lost its series")
	}
	if len(text) > 64<<10 {
		t.Errorf("the metrics are %d bytes for 64 servers of 60,000-byte names", len(text))
	}
}

// fields cuts a line as `\S+` would: the same runs, for any bytes.
func FuzzFields(f *testing.F) {
	for _, s := range []string{"", " ", "a", " a b\t\tc\n", "x\x00y \xff", "--key=v -p x", "\v\u00a0"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`\S+`)
	f.Fuzz(func(t *testing.T, s string) {
		got, want := fields(s), re.FindAllStringIndex(s, -1)
		if len(got) != len(want) {
			t.Fatalf("fields(%q) = %v, want %v", s, got, want)
		}
		for i := range got {
			if got[i][0] != want[i][0] || got[i][1] != want[i][1] {
				t.Fatalf("fields(%q) = %v, want %v", s, got, want)
			}
		}
	})
}
