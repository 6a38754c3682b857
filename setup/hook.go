package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

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
	// Now stamps the backup's name (time.Now when nil).
	Now func() time.Time
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
	if home == "" {
		return "", errors.New("no home directory to find the settings in")
	}
	return filepath.Join(home, strings.TrimPrefix(in.Dir, "~/"), in.File), nil
}

// Command is the hook's command: a quick reap of the user's leftovers by
// exe, in the background so the session does not wait for it, and silent,
// so nothing reaches the model's context.
func Command(exe, mark string) string {
	return fmt.Sprintf("(%s reap --quiet --lock-timeout 1s >/dev/null 2>&1 &) %s", exe, mark)
}

// entry is the hook's entry in the event's array.
func (h *Hook) entry(exe string) func(mark string) string {
	return func(mark string) string {
		return fmt.Sprintf(`{"matcher": %s, "hooks": [{"type": "command", "command": %s, "timeout": 5}]}`,
			jsonString(h.Client.Hook.Matcher), jsonString(Command(exe, mark)))
	}
}

// Install adds the hook for the binary at exe to the settings at path.
func (h *Hook) Install(path, exe string) error { return h.edit(path, exe, true) }

// Uninstall removes reaper's hook from the settings at path.
func (h *Hook) Uninstall(path string) error { return h.edit(path, "", false) }

func (h *Hook) edit(path, exe string, install bool) error {
	old, err := os.ReadFile(path)
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
		updated, err = AddHook(old, h.Client.Hook.Event, h.entry(exe))
	} else {
		updated, err = RemoveHook(old, h.Client.Hook.Event)
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
	if h.DryRun {
		fmt.Fprintf(h.Out, "would change %s:\n%s", path, lineDiff(string(old), string(updated)))
		return nil
	}
	if old != nil {
		now := time.Now
		if h.Now != nil {
			now = h.Now
		}
		backup := fmt.Sprintf("%s.reaper-backup-%s", path, now().Format("20060102T150405"))
		if err := os.WriteFile(backup, old, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(h.Out, "backed up  %s\n", backup)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := platform.WriteFileAtomic(path, updated, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(h.Out, "changed    %s\n", path)
	return nil
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
