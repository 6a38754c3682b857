package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
)

// Hook is one `reaper hook install` or `uninstall`, for one client.
type Hook struct {
	// Client is the client whose settings take the hook; its Info.Hook
	// says where they are.
	Client client.Info
	// DryRun prints the change and changes nothing.
	DryRun bool
	// Out is where each step is said.
	Out io.Writer
	// PolicyPath is where the hook's reap reads its policy: when none is
	// there, Install says the reap would only report ("": not said).
	PolicyPath string
}

// Settings is the client's settings file: in the dir its variable names
// when that is absolute, else in its dir in home.
func (h *Hook) Settings(getenv func(string) string, home string) (string, error) {
	in := h.Client.Hook
	if in == nil {
		return "", fmt.Errorf("%s has no session hooks reaper knows", h.Client.Title)
	}
	if dir := getenv(in.DirEnv); in.DirEnv != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, in.File), nil
	}
	if h := getenv(in.HomeEnv); in.HomeEnv != "" && filepath.IsAbs(h) {
		home = h
	}
	if home == "" {
		return "", errors.New("no home directory to find the settings in")
	}
	return filepath.Join(home, strings.TrimPrefix(in.Dir, "~/"), in.File), nil
}

// HookPlace says where a client's hook settings are, as a person writes
// it ("~/.claude/settings.json"), and where a variable moves them ("":
// none can).
func HookPlace(in *client.Hook) (place, moved string) {
	place = in.Dir + "/" + in.File
	switch {
	case in.DirEnv != "":
		moved = "$" + in.DirEnv + "/" + in.File
	case in.HomeEnv != "":
		moved = "$" + in.HomeEnv + strings.TrimPrefix(in.Dir, "~") + "/" + in.File
	}
	return place, moved
}

// Command is the hook's command: a quick reap of the user's leftovers by
// exe, in the background so the session does not wait for it, and silent,
// so nothing reaches the model's context.
func Command(exe, mark string) string { return commandFor(runtime.GOOS, exe, mark) }

// hookArgs are the hook's reap's arguments.
var hookArgs = []string{"reap", "--quiet", "--lock-timeout", "1s"}

// commandFor is Command on goos. On Windows it is PowerShell's, the one
// shell each client can run a hook in there (Gemini CLI 0.61 always;
// Claude Code 2.1.197 and Qwen Code 0.24.4 when the entry says "shell":
// "powershell", else Git Bash or cmd.exe): Start-Process starts exe with
// no window and returns at once, its output going nowhere the client
// reads; the path is a single-quoted string (a quote in it doubled), and
// the mark a comment, as on Unix. Gemini appends its exit-code check to
// the command, which the comment takes in, harmlessly.
func commandFor(goos, exe, mark string) string {
	if goos == "windows" {
		quoted := make([]string, len(hookArgs))
		for i, a := range hookArgs {
			quoted[i] = psQuote(a)
		}
		return fmt.Sprintf("Start-Process -WindowStyle Hidden -FilePath %s -ArgumentList %s %s", psQuote(exe), strings.Join(quoted, ","), mark)
	}
	return fmt.Sprintf("(%s %s >/dev/null 2>&1 &) %s", exe, strings.Join(hookArgs, " "), mark)
}

// psQuote is s as a PowerShell single-quoted string: nothing in it is
// expanded; a quote is doubled.
func psQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// entry is the hook's entry in the event's array.
func (h *Hook) entry(exe string) func(mark string) string {
	return h.entryFor(runtime.GOOS, exe)
}

// entryFor is entry on goos: on Windows, with "shell": "powershell" for a
// client that picks its hook's shell by it.
func (h *Hook) entryFor(goos, exe string) func(mark string) string {
	shell := ""
	if goos == "windows" && h.Client.Hook.PickShell {
		shell = `, "shell": "powershell"`
	}
	return func(mark string) string {
		return fmt.Sprintf(`{"matcher": %s, "hooks": [{"type": "command", "command": %s%s, "timeout": %d}]}`,
			jsonString(h.Client.Hook.Matcher), jsonString(commandFor(goos, exe, mark)), shell, h.Client.Hook.Timeout)
	}
}

// Install adds the hook for the binary at exe to the settings at path.
func (h *Hook) Install(path, exe string) error {
	if err := h.edit(path, exe, true); err != nil {
		return err
	}
	if note := PolicyNote(h.PolicyPath); h.PolicyPath != "" && note != "" {
		fmt.Fprintln(h.Out, note)
	}
	return nil
}

// Uninstall removes reaper's hook from the settings at path.
func (h *Hook) Uninstall(path string) error { return h.edit(path, "", false) }

func (h *Hook) edit(path, exe string, install bool) error {
	if os.Geteuid() == 0 {
		// Root edits only root's files; a user's, as that user (asUser).
		uid, gid, err := platform.PathSpeaker(path)
		if err != nil {
			return fmt.Errorf("%s: not edited as root: %w", path, err)
		}
		if uid != 0 {
			return h.asUser(uid, gid, path, install)
		}
	}
	target, mode, err := settingsFile(path)
	if err != nil {
		return err
	}
	old, err := platform.ReadFile(target, maxSettings)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = nil, nil
	}
	if err != nil {
		return err
	}
	if old == nil && !install {
		fmt.Fprintf(h.Out, "unchanged  %s (no such file)\n", path)
		return nil
	}
	var updated []byte
	if install {
		updated, err = AddHook(old, h.Client.Hook.Event, h.entry(exe), h.Client.Hook.JSONC)
	} else {
		updated, err = RemoveHook(old, h.Client.Hook.Event, h.Client.Hook.JSONC)
	}
	var se *SettingsError
	if errors.As(err, &se) {
		return fmt.Errorf("%s:%w", path, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(old, updated) {
		fmt.Fprintf(h.Out, "unchanged  %s\n", path)
		return nil
	}
	// A file install made (there was none) goes again with its hook.
	made := !install && string(updated) == Skeleton && bytes.Contains(old, []byte(HookMark+MadeFile))
	if h.DryRun {
		if made {
			fmt.Fprintf(h.Out, "would remove %s (reaper made it)\n", path)
			return nil
		}
		fmt.Fprintf(h.Out, "would change %s:\n%s", path, UnifiedDiff(path, string(old), string(updated)))
		return nil
	}
	if made {
		if err := os.Remove(target); err != nil {
			return err
		}
		fmt.Fprintf(h.Out, "removed    %s (reaper made it)\n", path)
		return nil
	}
	if old != nil {
		// One backup, beside the file: as it was before reaper's latest
		// change (uninstall gives back the rest).
		backup := target + ".reaper-backup"
		if err := platform.WriteFileAtomic(backup, old, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(h.Out, "backed up  %s\n", backup)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	// Through a link to its target (a dotfiles layout keeps its link), in
	// the file's own mode.
	if err := platform.WriteFileAtomic(target, updated, mode); err != nil {
		return err
	}
	if target != path {
		fmt.Fprintf(h.Out, "changed    %s (through the link, in %s)\n", path, target)
	} else {
		fmt.Fprintf(h.Out, "changed    %s\n", path)
	}
	return nil
}

// ownedBySelf reports whether the file at path, which fi describes, is
// this user's.
func ownedBySelf(path string, fi os.FileInfo) bool {
	uid, ok := platform.FileUID(path, fi)
	return ok && uid == platform.EUID()
}

// maxSettings bounds a settings file read: a client's settings are
// kilobytes.
const maxSettings = 16 << 20

// settingsFile is the file a settings edit writes — path, or the target
// its links lead to, so that a dotfiles link stays a link — and the mode
// to write it in: its own, or 0600 for a new one. A file this user does
// not own, or may not write, is refused: the edit would replace it with
// one of this user's, or undo a read-only the user chose.
func settingsFile(path string) (string, os.FileMode, error) {
	target, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(path); lerr == nil {
			return "", 0, fmt.Errorf("%s is a link to a file that is not there: not edited (make the file it names, or remove the link)", path)
		}
		return path, 0o600, nil
	}
	if err != nil {
		return "", 0, err
	}
	st, err := os.Stat(target)
	if err != nil {
		return "", 0, err
	}
	switch {
	case !st.Mode().IsRegular():
		return "", 0, fmt.Errorf("%s is not a regular file: not edited", target)
	case !ownedBySelf(target, st):
		return "", 0, fmt.Errorf("%s belongs to another user: not edited (its owner can run this, or change its owner to you)", target)
	case st.Mode().Perm()&0o200 == 0:
		return "", 0, fmt.Errorf("%s is read-only (mode %04o): not edited; make it writable ('chmod u+w %s') if reaper may change it", target, st.Mode().Perm(), target)
	}
	return target, st.Mode().Perm(), nil
}

// UnifiedDiff is the change from a to b as `diff -u` prints it, with
// three lines of context: the lines of a settings file are few.
func UnifiedDiff(name, a, b string) string {
	al, bl := splitLines(a), splitLines(b)
	// The longest common subsequence, by a table: settings are short.
	n, m := len(al), len(bl)
	if n*m > 1_000_000 {
		return fmt.Sprintf("--- %s\n+++ %s\n(%d lines against %d: too long to compare)\n", name, name, n, m)
	}
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		kind   byte // ' ', '-', '+'
		text   string
		ai, bi int
	}
	var ops []op
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && al[i] == bl[j]:
			ops = append(ops, op{' ', al[i], i, j})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			ops = append(ops, op{'+', bl[j], i, j})
			j++
		default:
			ops = append(ops, op{'-', al[i], i, j})
			i++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", name, name)
	const context = 3
	for k := 0; k < len(ops); {
		if ops[k].kind == ' ' {
			k++
			continue
		}
		// A hunk: from context lines before the change to context lines
		// after the last change within 2*context of the one before.
		start := max(k-context, 0)
		end := k
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		var as, bs int
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				as++
			}
			if o.kind != '-' {
				bs++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", ops[start].ai+1, as, ops[start].bi+1, bs)
		for _, o := range ops[start:end] {
			fmt.Fprintf(&out, "%c%s\n", o.kind, o.text)
		}
		k = end
	}
	return out.String()
}

// splitLines is s's lines, without the newline that ends the last.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
