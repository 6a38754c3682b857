package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/platform"
)

// hookOptions are the flags of `reaper hook install|uninstall`.
type hookOptions struct {
	dryRun bool
}

func newHookCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Wire a quick reap of your leftovers into an agent client's session start",
		Long: `hook adds to an agent client's own settings a hook that runs when a session
starts: a quick reap of this user's leftovers ('reaper reap --quiet', by
your policy; with none, the embedded policy only reports), in the
background, so the session does not wait for it, and silent, so nothing
reaches the model's context.

  claude-code   Claude Code's SessionStart hook, in ~/.claude/settings.json
                (or $CLAUDE_CONFIG_DIR/settings.json)

install keeps every other byte of the settings file as it was, backs the
file up beside it first (settings.json.reaper-backup-TIME), and changes
nothing when its hook is there already; --dry-run prints the change.
uninstall removes exactly its own hook. With 'reaper run' (wrap a client)
and 'reaper watch' (a service), this is the third way to stay clean.`,
	}
	cmd.AddCommand(newHookInstallCommand(g, true), newHookInstallCommand(g, false))
	return cmd
}

func newHookInstallCommand(g *globalOptions, install bool) *cobra.Command {
	var opts hookOptions
	use, short := "install CLIENT", "Add the session-start reap to a client's hooks"
	if !install {
		use, short = "uninstall CLIENT", "Remove the session-start reap from a client's hooks"
	}
	cmd := &cobra.Command{
		Use:       use,
		Short:     short,
		Example:   "  reaper hook " + strings.Fields(use)[0] + " claude-code --dry-run",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"claude-code"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "claude-code" {
				return usagef("hook: %q has no session hooks reaper knows: claude-code", args[0])
			}
			return runClaudeHook(&opts, g, install)
		},
	}
	cmd.Flags().BoolVar(&opts.dryRun, "dry-run", false, "print the change, and change nothing")
	return cmd
}

// hookMark ends the hook's command: what install and uninstall know their
// own entry by (a shell comment, so it runs as nothing).
const hookMark = "# reaper hook"

// claudeSettings is Claude Code's user settings file.
func claudeSettings() (string, error) {
	if dir := os.Getenv("CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "settings.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".claude", "settings.json"), nil
}

func runClaudeHook(opts *hookOptions, g *globalOptions, install bool) error {
	path, err := claudeSettings()
	if err != nil {
		return err
	}
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = nil, nil
	}
	if err != nil {
		return err
	}
	var updated []byte
	if install {
		exe, err := executable()
		if err != nil {
			return err
		}
		// JSON's own quoting (Go's %q writes \x escapes JSON has not),
		// without HTML's: the user reads > and &, not \u003e and \u0026.
		command := jsonString(fmt.Sprintf("(%s reap --quiet --lock-timeout 1s >/dev/null 2>&1 &) %s", exe, hookMark))
		entry := fmt.Sprintf(`{"matcher": "startup", "hooks": [{"type": "command", "command": %s, "timeout": 5}]}`, command)
		updated, err = addSessionStart(old, entry)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	} else {
		if old == nil {
			fmt.Fprintf(g.stdout, "unchanged  %s (no such file)\n", path)
			return nil
		}
		if updated, err = removeSessionStart(old); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if bytes.Equal(old, updated) {
		fmt.Fprintf(g.stdout, "unchanged  %s\n", path)
		return nil
	}
	if opts.dryRun {
		fmt.Fprintf(g.stdout, "would change %s:\n%s", path, lineDiff(string(old), string(updated)))
		return nil
	}
	if old != nil {
		backup := fmt.Sprintf("%s.reaper-backup-%s", path, time.Now().Format("20060102T150405"))
		if err := os.WriteFile(backup, old, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "backed up  %s\n", backup)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := platform.WriteFileAtomic(path, updated, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "changed    %s\n", path)
	return nil
}

// jsonMember is one member of a JSON object: its key, where the key's quote
// is, and where its value's bytes are.
type jsonMember struct {
	key               string
	keyAt, start, end int
}

// objectAt reads the object whose '{' is at data[at:] (after whitespace)
// and returns where its braces are and its members, in order.
func objectAt(data []byte, at int) (open, close int, members []jsonMember, err error) {
	dec := json.NewDecoder(bytes.NewReader(data[at:]))
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != '{' {
		return 0, 0, nil, errors.New("not a JSON object")
	}
	open = at + int(dec.InputOffset()) - 1
	for dec.More() {
		from := at + int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return 0, 0, nil, err
		}
		key, _ := tok.(string)
		keyAt := from + bytes.IndexByte(data[from:], '"')
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return 0, 0, nil, err
		}
		end := at + int(dec.InputOffset())
		members = append(members, jsonMember{key, keyAt, end - len(raw), end})
	}
	if _, err := dec.Token(); err != nil {
		return 0, 0, nil, err
	}
	close = at + int(dec.InputOffset()) - 1
	return open, close, members, nil
}

// splice is data with data[start:end] replaced by s.
func splice(data []byte, start, end int, s string) []byte {
	return append(append(append([]byte{}, data[:start]...), s...), data[end:]...)
}

// insertMember puts `"key": value` first in the object at data[open:].
func insertMember(data []byte, open int, nonEmpty bool, key, value string) []byte {
	text := fmt.Sprintf("\n  %q: %s", key, value)
	if nonEmpty {
		text += ","
	} else {
		text += "\n"
	}
	return splice(data, open+1, open+1, text)
}

// addSessionStart adds entry to the settings' hooks.SessionStart, unless
// an entry of reaper's is there; every other byte stays as it was.
func addSessionStart(data []byte, entry string) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte(fmt.Sprintf("{\n  \"hooks\": {\n    \"SessionStart\": [%s]\n  }\n}\n", entry)), nil
	}
	if bytes.Contains(data, []byte(hookMark)) {
		return data, nil
	}
	open, _, members, err := objectAt(data, 0)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		if m.key != "hooks" {
			continue
		}
		hopen, _, hooks, err := objectAt(data, m.start)
		if err != nil {
			return nil, fmt.Errorf("hooks: %w", err)
		}
		for _, h := range hooks {
			if h.key != "SessionStart" {
				continue
			}
			arr := bytes.TrimSpace(data[h.start:h.end])
			if len(arr) < 2 || arr[0] != '[' {
				return nil, errors.New("hooks.SessionStart is not an array")
			}
			sep := ", "
			if len(bytes.TrimSpace(arr[1:len(arr)-1])) == 0 {
				sep = ""
			}
			return splice(data, h.start+1, h.start+1, entry+sep), nil
		}
		return insertMember(data, hopen, len(hooks) > 0, "SessionStart", "["+entry+"]"), nil
	}
	return insertMember(data, open, len(members) > 0, "hooks", `{"SessionStart": [`+entry+`]}`), nil
}

// removeMember takes member i out of its object (close is where the
// object's '}' is): its key, value and one comma, so that what install
// inserted goes as it came.
func removeMember(data []byte, members []jsonMember, i, close int) []byte {
	m := members[i]
	open := bytes.LastIndexByte(data[:members[0].keyAt], '{')
	switch {
	case i > 0:
		return splice(data, members[i-1].end, m.end, "")
	case len(members) > 1:
		// The first of several, as install puts it: from the brace to the
		// comma after it.
		comma := m.end + bytes.IndexByte(data[m.end:], ',')
		return splice(data, open+1, comma+1, "")
	}
	// The only member: the object is left empty, as {}.
	return splice(data, open+1, close, "")
}

// removeSessionStart removes reaper's entries from hooks.SessionStart,
// and nothing else — but the SessionStart and hooks its removal leaves
// empty, which install made.
func removeSessionStart(data []byte) ([]byte, error) {
	if !bytes.Contains(data, []byte(hookMark)) {
		return data, nil
	}
	_, close, members, err := objectAt(data, 0)
	if err != nil {
		return nil, err
	}
	for i, m := range members {
		if m.key != "hooks" {
			continue
		}
		_, hclose, hooks, err := objectAt(data, m.start)
		if err != nil {
			return nil, err
		}
		for j, h := range hooks {
			if h.key != "SessionStart" {
				continue
			}
			var entries []json.RawMessage
			if err := json.Unmarshal(data[h.start:h.end], &entries); err != nil {
				return nil, err
			}
			// The array is written again without reaper's entries; each
			// other entry keeps its bytes.
			var kept []string
			for _, e := range entries {
				if !bytes.Contains(e, []byte(hookMark)) {
					kept = append(kept, string(e))
				}
			}
			if len(kept) > 0 {
				return splice(data, h.start, h.end, "["+strings.Join(kept, ", ")+"]"), nil
			}
			if len(hooks) > 1 {
				return removeMember(data, hooks, j, hclose), nil
			}
			return removeMember(data, members, i, close), nil
		}
	}
	return data, nil
}

// lineDiff shows the lines of b not in a as +, and of a not in b as -.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	in := func(lines []string) map[string]int {
		m := map[string]int{}
		for _, l := range lines {
			m[l]++
		}
		return m
	}
	ai, bi := in(al), in(bl)
	var out strings.Builder
	for _, l := range al {
		if bi[l] == 0 {
			fmt.Fprintf(&out, "- %s\n", l)
		}
	}
	for _, l := range bl {
		if ai[l] == 0 {
			fmt.Fprintf(&out, "+ %s\n", l)
		}
	}
	return out.String()
}

// jsonString is s as a JSON string, HTML's characters left as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
