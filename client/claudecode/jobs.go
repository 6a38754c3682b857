package claudecode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// The Bash tool's background jobs. A tool call `cmd &` ends within a
// second: the tool's shell, a session leader, exits, and its jobs are
// reparented with the dead shell's group and session, carrying
// CLAUDE_PID and CLAUDE_CODE_SESSION_ID. Once their claude is gone the
// pid mark proves them owner-dead (marks); while it lives they are its
// session's own — `npm run dev &` may be deliberate — and this file
// reports them as an advice, naming the tool call from the session's
// transcript.

// What is read of a live session's transcript, at most: its last
// transcriptTail bytes (a transcript grows by every turn, tens of
// megabytes in a long session; a job's tool call is near its end while
// the session is young enough to matter), the last maxToolCalls Bash
// calls in them, and the transcripts of maxTranscripts sessions: 8 MiB in
// all. (16 sessions' 5 MiB transcripts and their MCP logs, read whole to
// these bounds, took 121 ms with 1 MiB here and twice the log budget; a
// claude dir with no live session costs nothing more.)
const (
	transcriptTail = 512 << 10
	maxToolCalls   = 32
	maxTranscripts = 16
	maxCommand     = 200
)

// ToolCall is one Bash tool call, from a session's transcript: its id,
// its command (cut at maxCommand bytes), when it was made and when its
// result came (ms since the epoch; End 0: no result yet).
type ToolCall struct {
	Session string `json:"session"`
	ID      string `json:"id"`
	Command string `json:"command"`
	Start   int64  `json:"start"`
	End     int64  `json:"end,omitempty"`
}

// projectSlug is the name Claude Code gives a working directory's folder
// under projects/: every byte that is not a letter or a digit made '-'
// (/tmp/w becomes -tmp-w). A long path is cut and hashed by newer
// releases; such a session's transcript is not found, and its advice
// names no tool call.
func projectSlug(cwd string) string {
	b := []byte(cwd)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// readToolCalls reads the Bash tool calls of the live sessions' transcripts
// (<dir>/projects/<slug of cwd>/<session>.jsonl), bounded as above. A
// transcript that cannot be read says nothing: it only names tool calls in
// advice.
func (raw *Raw) readToolCalls(dir string, owner int) {
	n := 0
	for _, s := range raw.Sessions {
		if s.Cwd == "" || n == maxTranscripts {
			continue
		}
		rel := filepath.Join("projects", projectSlug(s.Cwd), s.SessionID+".jsonl")
		if strings.ContainsAny(s.SessionID, `/\`) || s.SessionID == ".." {
			continue
		}
		f, err := platform.OpenBeneath(dir, rel, owner)
		if err != nil {
			continue
		}
		n++
		raw.Tools = append(raw.Tools, toolCalls(f, s.SessionID)...)
		f.Close()
	}
}

// toolCalls parses the last transcriptTail bytes of a transcript: the Bash
// tool_use blocks, and the tool_result that answers each.
func toolCalls(f io.ReadSeeker, session string) []ToolCall {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil
	}
	from := max(size-transcriptTail, 0)
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return nil
	}
	sc := bufio.NewScanner(io.LimitReader(f, transcriptTail))
	sc.Buffer(make([]byte, 0, 64<<10), transcriptTail)
	// Only the last lines that may hold a call or a result are parsed:
	// the calls kept are the last maxToolCalls.
	var lines [][]byte
	first := from > 0
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			first = false // cut by the seek: not a whole line
			continue
		}
		if bytes.Contains(line, []byte(`"tool_use"`)) || bytes.Contains(line, []byte(`"tool_result"`)) {
			if len(lines) == 4*maxToolCalls {
				lines = append(lines[:0], lines[1:]...)
			}
			lines = append(lines, bytes.Clone(line))
		}
	}
	var calls []ToolCall
	index := map[string]int{}
	for _, line := range lines {
		var ev struct {
			Timestamp time.Time `json:"timestamp"`
			Message   struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &ev) != nil {
			continue
		}
		var blocks []struct {
			Type      string `json:"type"`
			ID        string `json:"id"`
			Name      string `json:"name"`
			ToolUseID string `json:"tool_use_id"`
			Input     struct {
				Command string `json:"command"`
			} `json:"input"`
		}
		if json.Unmarshal(ev.Message.Content, &blocks) != nil {
			continue // a text message's content is a string
		}
		at := ev.Timestamp.UnixMilli()
		for _, b := range blocks {
			switch {
			case b.Type == "tool_use" && b.Name == "Bash" && b.ID != "" && len(b.ID) <= 64:
				index[b.ID] = len(calls)
				calls = append(calls, ToolCall{Session: session, ID: b.ID, Command: cut(b.Input.Command, maxCommand), Start: at})
			case b.Type == "tool_result":
				if k, ok := index[b.ToolUseID]; ok {
					calls[k].End = at
				}
			}
		}
	}
	if len(calls) > maxToolCalls {
		calls = calls[len(calls)-maxToolCalls:]
	}
	return calls
}

// cut cuts s to n bytes, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// jobs is one config dir's word on its live sessions' Bash-tool jobs, for
// advice: its sessions and their tool calls, spoken by uid.
type jobs struct {
	uid      uint32
	sessions []Session
	calls    []ToolCall
}

// callMargin is how far a job's start may fall outside its tool call's
// bracket and still be its: the transcript's times are the client's clock,
// in ms, and a start time is the kernel's, in clock ticks.
const callMargin = 2 * time.Second

// Advise reports each finding that is a Bash-tool job of a live claude
// this dir's sessions name: its CLAUDE_PID lives, started before it, and
// is the pid of one of the sessions. It is that session's, and not
// signalled by the example policy (its rule tool-call-jobs reports); the
// advice says which tool call started it, how long ago, and what it costs.
// It speaks only of uid's processes.
func (j *jobs) Advise(r *scan.Result, _ scan.Sampler) []scan.Advice {
	s := r.Tree.Snap
	var out []scan.Advice
	for k := range r.Findings {
		f := &r.Findings[k]
		if f.Owner != OwnerName || f.Has(scan.OwnerDead) || s.UID(f.Root) != j.uid {
			continue
		}
		v, ok := s.Getenv(f.Root, EnvPID)
		pid, err := strconv.Atoi(v)
		if !ok || err != nil || pid <= 1 {
			continue
		}
		if gone, _ := scan.OwnerGone(s, scan.Named{PID: pid, NotAfter: f.Root, User: j.uid}); gone {
			continue // gone: owner-dead, the pid mark's
		}
		sid, _ := s.Getenv(f.Root, EnvSessionID)
		var sess *Session
		for i := range j.sessions {
			if j.sessions[i].PID == pid {
				sess = &j.sessions[i]
			}
		}
		if sess == nil {
			continue // another config dir's session, or none this reaper read
		}
		out = append(out, scan.Advice{ID: "tool-call-ended", Severity: "info",
			Evidence: j.evidence(s, f, pid, sid, sess), Setting: setting})
	}
	return out
}

const setting = `a live session's job may be deliberate (npm run dev &), so it is only reported: end it with kill -TERM -- -PGID, or let a rule act on such jobs (owner = ["claude-code"], env = ["CLAUDE_PID"], action = "terminate"; the example policy's "claude-tool-jobs" reports them)`

// evidence says what the job is, whose, which tool call started it, how
// long ago, and what it costs.
func (j *jobs) evidence(s *platform.Snapshot, f *scan.Finding, pid int, sid string, sess *Session) string {
	root := f.Root
	var cpu uint64
	for _, m := range f.Members {
		cpu += m.Proc.UTime + m.Proc.STime
	}
	secs := float64(cpu) / float64(max(s.ClockTicks, 1))
	var b strings.Builder
	fmt.Fprintf(&b, "pid %d (%s), %d processes, %s resident, %.0f s of CPU, started %s ago by the Bash tool of the live claude pid %d",
		root.PID, cut(s.CommandLine(root), 80), len(f.Members), mib(f.RSS), secs, s.Age(root).Round(time.Second), pid)
	if sid != sess.SessionID {
		fmt.Fprintf(&b, " in its session %s, which has ended (claude runs session %s now)", sid, sess.SessionID)
	} else {
		fmt.Fprintf(&b, ", session %s", sid)
	}
	started := s.Started(root)
	for i := len(j.calls) - 1; i >= 0; i-- {
		c := j.calls[i]
		if c.Session != sid || c.Start == 0 {
			continue
		}
		from, to := time.UnixMilli(c.Start).Add(-callMargin), time.UnixMilli(c.End).Add(callMargin)
		if started.Before(from) || c.End != 0 && started.After(to) {
			continue
		}
		if c.End == 0 {
			fmt.Fprintf(&b, "; tool call %s (%q), still running", c.ID, c.Command)
		} else {
			fmt.Fprintf(&b, "; tool call %s (%q), which ended %s ago", c.ID, c.Command, s.Taken.Sub(time.UnixMilli(c.End)).Round(time.Second))
		}
		return b.String()
	}
	b.WriteString("; its tool call is not in the end of the session's transcript")
	return b.String()
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// checkedCalls are the tool calls of a read whose identifiers are ones a
// client writes and whose commands were cut (Judge trusts no reader).
func checkedCalls(calls []ToolCall) []ToolCall {
	if len(calls) > maxTranscripts*maxToolCalls {
		return nil
	}
	out := make([]ToolCall, 0, len(calls))
	for _, c := range calls {
		if statedir.CheckID("session", c.Session) == "" && statedir.CheckID("id", c.ID) == "" && len(c.Command) <= maxCommand+len("…") {
			out = append(out, c)
		}
	}
	return out
}
