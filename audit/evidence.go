package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Evidence is `reaper evidence PID|SESSION`: what a bug report to a
// client's project needs to show a leak — the versions, the tree, the
// evidence lines and the client's own records behind them — redacted
// (Redact) before anyone sees it.
type Evidence struct {
	SchemaVersion int     `json:"schema_version"`
	Generated     string  `json:"generated"` // RFC 3339, UTC
	Subject       string  `json:"subject"`   // the PID or session asked about
	Reaper        Version `json:"reaper"`
	Kernel        string  `json:"kernel"` // uname's release and version, where there is one
	// Session is the session the subject is, or is in; Orphan the
	// finding it is, or is in (either may be absent).
	Session *PSSession `json:"session,omitempty"`
	Orphan  *PSOrphan  `json:"orphan,omitempty"`
	// Explanation is `reaper explain`'s story of the subject's process:
	// its ancestors, the verdict, every rule's.
	Explanation *Explanation `json:"explanation,omitempty"`
	// Records are the client's own records the evidence names, each with
	// an excerpt where the reaper could read it as their owner.
	Records []RecordExcerpt `json:"records"`
	// Redacted says what was taken out, by kind, and how many times.
	Redacted map[string]int `json:"redacted"`
}

// RecordExcerpt is one of the client's records: its path, and its first
// bytes (bounded) or why they are not here.
type RecordExcerpt struct {
	Path    string `json:"path"`
	Excerpt string `json:"excerpt,omitempty"`
	Note    string `json:"note,omitempty"`
}

// MaxExcerpt bounds one record's excerpt.
const MaxExcerpt = 4 << 10

// Redact takes secrets out of every string of the bundle, and shortens
// each home given to "~" (the longest first). It works on the bundle's
// JSON, so that no field is forgotten: a field added later is redacted
// too.
func (e *Evidence) Redact(homes []string) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return err
	}
	sort.Slice(homes, func(i, j int) bool { return len(homes[i]) > len(homes[j]) })
	counts := map[string]int{}
	doc = redactValue(doc, homes, counts)
	b, err = json.Marshal(doc)
	if err != nil {
		return err
	}
	*e = Evidence{}
	if err := json.Unmarshal(b, e); err != nil {
		return err
	}
	e.Redacted = counts
	return nil
}

func redactValue(v any, homes []string, counts map[string]int) any {
	switch v := v.(type) {
	case string:
		return RedactString(v, homes, counts)
	case []any:
		for i := range v {
			v[i] = redactValue(v[i], homes, counts)
		}
	case map[string]any:
		for k := range v {
			if k == "redacted" {
				continue
			}
			v[k] = redactValue(v[k], homes, counts)
		}
	}
	return v
}

// WriteTable writes the bundle as Markdown, to paste into an issue.
func (e *Evidence) WriteTable(w io.Writer, _ Style) error {
	ew := &errWriter{w: w}
	ew.printf("## reaper evidence: %s\n\n", mdText(e.Subject))
	ew.printf("| | |\n|---|---|\n")
	ew.printf("| reaper | %s (%s) %s/%s |\n", mdText(e.Reaper.Version), mdText(shortCommit(e.Reaper.Commit)), e.Reaper.OS, e.Reaper.Arch)
	if e.Kernel != "" {
		ew.printf("| kernel | %s |\n", mdText(e.Kernel))
	}
	if s := e.Session; s != nil {
		client := s.Title
		if s.Version != "" {
			client += " " + s.Version
		}
		up := "up " + HumanAge(time.Duration(s.AgeSeconds)*time.Second)
		if s.State == "ended" {
			up = s.Started()
		}
		ew.printf("| client | %s |\n| session | %s, pid %d, %s, %s |\n", mdText(client), mdText(orNone(s.SessionID)), s.PID, s.State, up)
		if s.Dir != "" {
			ew.printf("| directory | %s |\n", mdText(s.Dir))
		}
	}
	ew.printf("| generated | %s |\n\n", e.Generated)
	if s := e.Session; s != nil && s.State == "ended" {
		ew.printf("### The session ended: its process is gone; it left %s (%s): %s\n\n", Plural(len(s.Leftovers), "tree"), HumanBytes(s.MemoryBytes), joinPIDs(s.Leftovers))
	} else if s != nil {
		ew.printf("### The session's tree (%s, %s)\n\n```\n", HumanBytes(s.MemoryBytes), Plural(len(s.Processes), "process"))
		for _, p := range s.Processes {
			ew.printf("%s\n", fullLine(p))
		}
		ew.printf("```\n\n")
	}
	if o := e.Orphan; o != nil {
		ew.printf("### The leftover tree %d (%s): %s\n\n```\n", o.RootPID, HumanBytes(o.MemoryBytes), strings.Join(o.Reasons, ", "))
		for _, p := range o.Processes {
			ew.printf("%s\n", fullLine(p))
		}
		ew.printf("```\n\n")
	}
	if x := e.Explanation; x != nil {
		ew.printf("### What reaper makes of pid %d\n\n%s: %s\n\n", x.PID, x.Verdict, mdText(x.Why))
		if f := x.Finding; f != nil && len(f.Evidence) > 0 {
			ew.printf("Evidence:\n\n")
			for _, line := range f.Evidence {
				ew.printf("- %s\n", mdText(line))
			}
			ew.printf("\n")
		}
		if len(x.Ancestors) > 0 {
			ew.printf("Ancestors:\n\n")
			for _, a := range x.Ancestors {
				role := ""
				if a.Role != "" {
					role = " (" + a.Role + ")"
				}
				ew.printf("- %d%s `%s`\n", a.PID, mdText(role), strings.ReplaceAll(clipWidth(Printable(a.Cmdline), 160), "`", "'"))
			}
			ew.printf("\n")
		}
	}
	for _, r := range e.Records {
		ew.printf("### %s\n\n", mdText(r.Path))
		if r.Excerpt != "" {
			ew.printf("```\n%s\n```\n\n", strings.ReplaceAll(strings.TrimRight(r.Excerpt, "\n"), "```", "'''"))
		}
		if r.Note != "" {
			ew.printf("%s\n\n", mdText(r.Note))
		}
	}
	var kinds []string
	for k, n := range e.Redacted {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(kinds)
	if len(kinds) == 0 {
		kinds = []string{"nothing matched"}
	}
	ew.printf("_Redacted by reaper before printing: %s. No environment values but the markers reaper used. Read it before you post it._\n", strings.Join(kinds, ", "))
	return ew.err
}

// mdText is s for a Markdown line: printable, its pipes escaped.
func mdText(s string) string { return strings.ReplaceAll(Printable(s), "|", `\|`) }

func orNone(s string) string {
	if s == "" {
		return "no id"
	}
	return s
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	if c == "" {
		return "no commit"
	}
	return c
}

// fullLine is one process of a tree for a report: its command line whole
// (redacted already), not cut to a terminal's width.
func fullLine(p PSProcess) string {
	what := p.Kind
	if p.Name != "" {
		what += " " + p.Name
	}
	leak := ""
	if len(p.Leak) > 0 {
		leak = " LEAK " + strings.Join(p.Leak, ",")
	}
	return fmt.Sprintf("%s%d %s %s %s old, state %s%s: %s", strings.Repeat("  ", min(p.Depth, 8)), p.PID, Printable(what),
		HumanBytes(p.MemoryBytes), HumanAge(time.Duration(p.AgeSeconds)*time.Second), Printable(p.State), leak, Printable(p.Cmdline))
}
