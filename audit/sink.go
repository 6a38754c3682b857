package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// The outbound rule. Every string a user controls — a process's command
// line and title, a server's name from a config, a session's title, a
// path, an environment value — leaves reaper through one function per
// kind of sink, and each of them redacts secrets (RedactString's forms),
// clips to its bound and escapes what the sink cannot take:
//
//	sink                          function                    bound
//	a value any view keeps        UserText(s, n)              n bytes: MaxCmdline for a command line, MaxName for a name
//	terminal, log line, journald  Term(s, n)                  n bytes, then Printable (no control, valid UTF-8)
//	JSON                          the values UserText made    encoding/json makes them valid UTF-8
//	a metric label                Label(s)                    MaxLabel bytes, Printable, the text format's escapes
//	D-Bus (notifications)         Term(s, n)                  as the terminal: D-Bus wants valid UTF-8
//
// A command line is never a metric label: a server is labelled by its
// config's name, else its program's base name, else a short hash of its
// command (ServerLabel); and the series a user's processes and records
// can make are bounded per user (MaxSeriesPerUser).
const (
	// MaxCmdline is how much of a command line every view keeps: the
	// first 4 KiB of the 64 KiB the snapshot reads (platform.MaxDetail),
	// so that a user's processes add at most that much each to every
	// report, audit record and journal entry.
	MaxCmdline = maxCmdline
	// MaxName is how much of a name (a server's, a session's title, a
	// client's record's id) any view keeps.
	MaxName = 256
	// MaxLabel is how much of a label value a metric keeps.
	MaxLabel = 64
	// MaxSeriesPerUser is how many series of one family one user's
	// processes and records make (the servers their sessions copy, their
	// fork storms); past it, the rest are one series, server="(more)".
	MaxSeriesPerUser = 16
)

// UserText is s as reaper keeps a string a user controls for any sink:
// its secrets redacted, cut at n bytes at a character (with "…").
// Redacted first, so that a cut never leaves part of a secret.
func UserText(s string, n int) string {
	if len(s) > 4*n+1024 {
		s = clipAt(s, 4*n+1024) // what the redaction reads is bounded too
	}
	return clipAt(RedactString(s, nil, map[string]int{}), n)
}

// Term is s for a terminal, a log line, a journal field or a D-Bus
// string: UserText at n bytes, escaped (Printable).
func Term(s string, n int) string { return Printable(UserText(s, n)) }

// Label is s as the value of a metric label, between its quotes:
// UserText at MaxLabel bytes, escaped (Printable: the text format takes
// no invalid UTF-8 — one such label and a scraper drops the whole
// exposition), with the text format's own escapes for \ and ".
func Label(s string) string {
	// A newline is the text format's to escape (\n), the rest Printable's.
	lines := strings.Split(UserText(s, MaxLabel), "\n")
	for i := range lines {
		lines[i] = Printable(lines[i])
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(strings.Join(lines, "\n"))
}

// JournalField is a REAPER_* field's value for journald: UserText at
// maxText. The native protocol is binary-safe (a value is sent with its
// length), so the bytes go as they are; only the MESSAGE, which
// journalctl shows as a line, is escaped (Term).
func JournalField(s string) string { return UserText(s, maxText) }

// CommandLine is p's command line as every view keeps it: UserText at
// MaxCmdline.
func CommandLine(s *platform.Snapshot, p *platform.Process) string {
	return UserText(s.CommandLine(p), MaxCmdline)
}

// ServerLabel is what a metric calls a server: its config's name, else
// its program's base name (the package or script a launcher runs, not
// the launcher), else a short stable hash of its command line — never
// the command line, which may hold what only its user may read (a URL's
// token, a path). Each is a Label's value.
func ServerLabel(name, command string) string {
	if name != "" {
		return name
	}
	if p := programName(command); p != "" {
		return p
	}
	sum := sha256.Sum256([]byte(command))
	return "cmd-" + hex.EncodeToString(sum[:4])
}

// launchers run the program a server is: the base name that says which
// server it is is the program's, after them and their flags.
var launchers = map[string]int{"npx": 1, "uvx": 1, "bunx": 1, "node": 1, "bun": 1, "deno": 1, "python": 1, "python3": 1,
	"uv": 1, "pipx": 1, "npm": 2, "pnpm": 2, "yarn": 2, "env": 1, "sh": 1, "bash": 1, "cmd.exe": 1}

// programName is the base name of the program a command line runs, past
// its launchers ("npm exec mcp-remote https://…" → "mcp-remote",
// "node /x/dist/index.js" → "index.js"); "" when what is there is no
// plain name (a URL, an assignment).
func programName(command string) string {
	words := strings.Fields(command)
	for len(words) > 0 {
		w := words[0]
		skip, launcher := launchers[path.Base(w)]
		switch {
		case strings.HasPrefix(w, "-"), strings.Contains(w, "=") && !strings.Contains(w, "/"):
			words = words[1:] // a flag, or env's NAME=VALUE
			continue
		case launcher && len(words) > skip:
			words = words[skip:] // npx X, npm exec X, uv run X
			continue
		}
		if strings.Contains(w, "://") || strings.ContainsAny(w, "?&=@:") && !strings.HasPrefix(w, "@") {
			return ""
		}
		if _, pkg, ok := strings.Cut(w, "node_modules/"); ok {
			for strings.Contains(pkg, "node_modules/") {
				_, pkg, _ = strings.Cut(pkg, "node_modules/")
			}
			w = pkg // the package a script is of: node_modules/mcp-remote/dist/proxy.js
			if parts := strings.SplitN(pkg, "/", 3); strings.HasPrefix(pkg, "@") && len(parts) >= 2 {
				return parts[0] + "/" + parts[1]
			} else if len(parts) > 0 {
				return parts[0]
			}
		}
		name := path.Base(w)
		if at := strings.LastIndexByte(name, '@'); at > 0 {
			name = name[:at] // pkg@1.2.3
		}
		if strings.HasPrefix(w, "@") && strings.Count(w, "/") >= 1 {
			scope, rest, _ := strings.Cut(w, "/")
			if at := strings.IndexByte(rest, '@'); at > 0 {
				rest = rest[:at]
			}
			name = scope + "/" + rest
		}
		if name == "." || name == "/" {
			return ""
		}
		return name
	}
	return ""
}
