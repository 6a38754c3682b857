package setup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/orphanreaper/reaper/platform"
)

// binary is the binary the service will run: Binary's, or this one's,
// links resolved. A system service runs it as root, so it must be a file
// only root can replace (platform.WhoCanReplace): otherwise the user who
// can replace it is root at the next start.
func (s *Service) binary() (string, error) {
	exe, err := Executable()
	if s.Binary != "" {
		exe, err = CheckedPath(s.Binary)
		if err == nil && !filepath.IsAbs(s.Binary) {
			err = &UsageError{fmt.Sprintf("--binary %s: want an absolute path", s.Binary)}
		}
		if err == nil {
			if st, serr := os.Stat(exe); serr != nil {
				err = fmt.Errorf("--binary: %w", serr)
			} else if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
				err = fmt.Errorf("--binary %s: not an executable file", exe)
			}
		}
	}
	if err != nil || s.User {
		return exe, err
	}
	why, err := platform.WhoCanReplace(exe)
	if err != nil {
		return "", err
	}
	if why != "" {
		return "", fmt.Errorf(`a system service runs its binary as root, and %s could be replaced by a user other than root (%s): not installed.
Copy it where only root can write, and install that copy:
    sudo install -m 0755 %s /usr/local/bin/reaper
    sudo /usr/local/bin/reaper service install
or pass --binary with the path of a root-owned copy; for this user's processes only, 'reaper service install --user' needs no root`, exe, why, exe)
	}
	return exe, nil
}

// Executable is this binary's absolute path, links resolved: what a unit
// or a hook runs must not move when a link (npm's bin, Homebrew's opt) is
// repointed mid-upgrade — it is resolved now, and install is run again
// after one.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return CheckedPath(exe)
}

// CheckedPath is path with its links resolved, refused when it holds what
// a unit's or a shell's command line would take apart.
func CheckedPath(exe string) (string, error) {
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if strings.ContainsAny(exe, " \"'\\%$;&|<>()`") || strings.ContainsFunc(exe, unicode.IsControl) {
		return "", fmt.Errorf("this binary's path %q holds a space, a quote, a control character or a character a unit's or a shell's command line would take apart: move it", exe)
	}
	return exe, nil
}
