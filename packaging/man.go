package packaging

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// The man pages' finishing (reaper gen-docs, built with -tags docs, writes
// them from the command tree): the FILES section, groff's typography, an
// EXIT STATUS section of its own, and a footer that fits.

// files is the FILES section of reaper(1): what reaper reads and writes,
// where the packages put it.
const files = `.SH FILES
.TP
\fB/etc/reaper/policy.toml\fP
The policy of a reaper run as root; a user's reaper reads
\fB$XDG_CONFIG_HOME/reaper/policy.toml\fP (\fB~/.config/reaper/policy.toml\fP).
Without one, the embedded default, which only reports. See \fBreaper.toml\fP(5).
.TP
\fB/run/reaper.lock\fP, \fB/run/reaper.seen\fP
One reaper at a time (root's; a user's are in \fB$XDG_RUNTIME_DIR\fP), and the
report-only findings a timer's reap has already recorded.
.TP
\fB/var/log/reaper/audit.jsonl\fP
The audit log the packaged unit writes (\fB--audit-log\fP), one JSON line per
decision and signal, rotated by \fB/etc/logrotate.d/reaper\fP; \fBreaper history\fP reads it.
.TP
\fB/var/lib/prometheus/node-exporter/reaper.prom\fP
The metrics the packaged unit writes (\fB--metrics\fP) for node_exporter's textfile collector.
.TP
\fB/usr/lib/systemd/system/reaper.service\fP, \fBreaper.timer\fP
The packaged units: \fBreap --quiet\fP every minute; the user units are in
\fB/usr/lib/systemd/user/\fP.
.TP
\fB/usr/share/doc/reaper/\fP
The example policy, the report's JSON Schema, the ledger format, the
gateway hook, the Prometheus alerts and the Grafana dashboard.
`

// AddManFiles puts the FILES section into the man page at path, before SEE
// ALSO.
func AddManFiles(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	page := string(b)
	at := strings.Index(page, ".SH SEE ALSO")
	if at < 0 {
		at = len(page)
	}
	return os.WriteFile(path, []byte(page[:at]+files+"\n\n"+page[at:]), 0o644)
}

// TidyManPage makes a cobra page read as a man page: a switch shows no
// "[=false]" (cobra prints a boolean's default as an optional value), the
// help's typography is groff's own, and
// the command's "Exit status:" paragraph moves out of DESCRIPTION into an
// EXIT STATUS section of its own, before OPTIONS.
func TidyManPage(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	page := strings.ReplaceAll(string(b), "\\fP[=false]", "\\fP")
	// A value's name in quotes reads as the default to type
	// (--lock-file="FILE"): cobra quotes a string flag's default, and
	// manDefaults puts the value's name there where the default depends
	// on the run. In italics, unquoted, as man(7) writes a placeholder.
	page = placeholder().ReplaceAllString(page, `\fP=\fI$1\fP`)
	// groff reads its input as Latin-1 unless told: the help's few
	// non-ASCII characters as its own escapes.
	page = strings.NewReplacer("—", "\\(em", "–", "\\(en", "→", "\\(->", "…", "...", "×", "\\(mu", "·", "\\(pc",
		"‘", "\\(oq", "’", "\\(cq", "“", "\\(lq", "”", "\\(rq", "≤", "\\(<=", "≥", "\\(>=").Replace(page)
	if at := strings.Index(page, "\nExit status:"); at >= 0 {
		end := strings.Index(page[at+1:], "\n\n")
		next := strings.Index(page[at+1:], "\n.")
		if end < 0 || next >= 0 && next < end {
			end = next
		}
		if end >= 0 {
			para := strings.TrimPrefix(page[at+1:at+1+end], "Exit status: ")
			page = page[:at+1] + page[at+1+end:]
			section := ".SH EXIT STATUS\n.PP\n" + para + "\n\n"
			if opt := strings.Index(page, ".SH OPTIONS"); opt >= 0 {
				page = page[:opt] + section + page[opt:]
			} else if see := strings.Index(page, ".SH SEE ALSO"); see >= 0 {
				page = page[:see] + section + page[see:]
			}
		}
	}
	return os.WriteFile(path, []byte(page), 0o644)
}

// placeholder is a flag's value name in quotes on a man page's option
// line: a word in capitals.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\fP="([A-Z][A-Z0-9_]*)"`) })

// ManSource is the pages' left footer, "reaper VERSION", kept short: man
// centres the date on an 80-column line, and a snapshot's version
// (0.0.0~git20261126110605.214.4d8f513, 36 characters) would run into it. A
// snapshot keeps its commit; the date beside it says when.
func ManSource(v string) string {
	if i := strings.Index(v, "~git"); i >= 0 {
		// 0.0.0~gitTIME.N.HASH[.dirty]: the hash, and .dirty if there.
		if f := strings.Split(v[i+len("~git"):], "."); len(f) >= 3 {
			v = strings.Join(f[2:], ".") + " (snapshot)"
		}
	}
	const most = len("reaper ") + 24
	if s := "reaper " + v; len(s) <= most {
		return s
	}
	return "reaper " + v[:most-len("reaper ")-3] + "..."
}
