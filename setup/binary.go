package setup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"

	"github.com/orphanreaper/reaper/platform"
)

// binary is the binary the service will run: Binary's, or this one's,
// links resolved. A system service runs it as root, so it must be a file
// only root can replace (platform.WhoCanReplace): otherwise the user who
// can replace it is root at the next start.
func (s *Service) binary() (string, error) {
	exe, note, err := PlannedExecutable(s.DryRun)
	if note != "" && s.Binary == "" {
		fmt.Fprintln(s.Out, note)
	}
	if s.Binary != "" {
		exe, err = CheckedPath(s.Binary)
		if err == nil && !filepath.IsAbs(s.Binary) {
			err = &UsageError{fmt.Sprintf("--binary %s: want an absolute path", s.Binary)}
		}
		if err == nil {
			if st, serr := os.Stat(exe); serr != nil {
				err = fmt.Errorf("--binary: %w", serr)
			} else if !platform.IsExecutable(exe, st) {
				err = fmt.Errorf("--binary %s: not an executable file", exe)
			}
		}
	}
	if err != nil || s.User || runtime.GOOS == "windows" {
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

// Executable is this binary's absolute path as a unit or a hook should
// name it: links resolved (npm's bin is a launcher script; what a unit
// runs must not change when a link is repointed mid-upgrade), but a
// Homebrew keg's versioned Cellar path named by its opt link, which
// `brew upgrade` repoints rather than deletes; and refused where it will
// not last — Go's build cache ('go run'), npx's cache.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = CheckedPath(exe); err != nil {
		return "", err
	}
	if why, fix := Transient(exe); why != "" {
		return "", &TransientError{Exe: exe, Why: why, Fix: fix}
	}
	return Stable(exe), nil
}

// TransientError is a binary that will not be there for long (Transient):
// a hook or a service must not name it.
type TransientError struct{ Exe, Why, Fix string }

func (e *TransientError) Error() string {
	return fmt.Sprintf("this binary is %s, %s: a hook or a service that named it would fail once it is gone. %s, then run this again from that copy", e.Exe, e.Why, e.Fix)
}

// PlannedExecutable is Executable for a step that may be a dry run: a dry
// run writes nothing, so it plans with a binary that will not last
// replaced by the copy its fix installs — never a path into a cache — and
// a note saying what the real run will ask for first.
func PlannedExecutable(dryRun bool) (exe, note string, err error) {
	exe, err = Executable()
	var te *TransientError
	if dryRun && errors.As(err, &te) {
		copy := Installed(te.Exe, os.Getenv)
		return copy, fmt.Sprintf("note: this binary is %s (%s): the real run refuses it, and this plan names %s instead. %s first.", te.Why, te.Exe, copy, te.Fix), nil
	}
	return exe, "", err
}

// Installed is where the fix for a transient exe puts the same program
// (Transient): go install's bin ($GOBIN, else the first $GOPATH's bin,
// else ~/go/bin), or, for npx's cache, the name npm's global install puts
// on PATH.
func Installed(exe string, getenv func(string) string) string {
	name := filepath.Base(exe)
	if strings.Contains(filepath.ToSlash(exe), "/_npx/") {
		return name
	}
	if bin := getenv("GOBIN"); filepath.IsAbs(bin) {
		return filepath.Join(bin, name)
	}
	if gopath, _, _ := strings.Cut(getenv("GOPATH"), string(filepath.ListSeparator)); filepath.IsAbs(gopath) {
		return filepath.Join(gopath, "bin", name)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return name
	}
	return filepath.Join(home, "go", "bin", name)
}

// Transient says why a binary at exe will not be there for long, and
// the one route that installs the same code for good — "" when it will
// last: in Go's build cache (go run from a checkout: go install of the
// same checkout, which needs nothing published), or in npx's cache (npx
// without an install: the package npx fetched, installed).
func Transient(exe string) (why, fix string) {
	slash := filepath.ToSlash(exe)
	switch {
	case strings.Contains(slash, "/go-build"), inGoCache(exe, os.Getenv("GOCACHE")):
		return "in Go's build cache ('go run' builds it there and removes it)",
			"Install it from the same checkout: 'go install ./cmd/reaper' (it lands in $(go env GOPATH)/bin, ~/go/bin by default)"
	case strings.Contains(slash, "/_npx/"):
		return "in npx's cache, which npm clears", "Install the package npx ran: 'npm install -g @orphanreaper/reaper'"
	}
	return "", ""
}

// inGoCache reports whether exe is in a Go build cache wherever it is
// (GOCACHE may name any dir): below gocache, or where the cache keeps a
// program 'go run' built and ran — since Go 1.24 the executable itself is
// cached, at DIR/xx/<64 hex>-d/NAME (cmd/go/internal/cache).
func inGoCache(exe, gocache string) bool {
	if gocache != "" && gocache != "off" {
		if rel, err := filepath.Rel(gocache, exe); err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	entry := filepath.Base(filepath.Dir(exe))
	shard := filepath.Base(filepath.Dir(filepath.Dir(exe)))
	hash, ok := strings.CutSuffix(entry, "-d")
	return ok && len(hash) == 64 && isHex(hash) && len(shard) == 2 && isHex(shard) && strings.HasPrefix(hash, shard)
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Stable is exe with a Homebrew keg's versioned path (PREFIX/Cellar/NAME/
// VERSION/REST) written as the keg's opt link (PREFIX/opt/NAME/REST),
// which stays when `brew upgrade` removes the old version; and a Scoop
// app's versioned path (ROOT\apps\reaper\VERSION\reaper.exe) as its
// current junction (ROOT\apps\reaper\current\reaper.exe), which `scoop
// update` repoints and `scoop cleanup` leaves.
func Stable(exe string) string {
	slash := filepath.ToSlash(exe)
	if i := strings.Index(slash, "/Cellar/"); i >= 0 {
		parts := strings.SplitN(slash[i+len("/Cellar/"):], "/", 3) // NAME, VERSION, REST
		if len(parts) == 3 {
			return sameOr(exe, filepath.FromSlash(slash[:i]+"/opt/"+parts[0]+"/"+parts[2]))
		}
	}
	if i := strings.LastIndex(slash, "/apps/reaper/"); i >= 0 {
		parts := strings.Split(slash[i+len("/apps/reaper/"):], "/") // VERSION, reaper.exe
		if len(parts) == 2 && parts[1] == "reaper.exe" && parts[0] != "current" {
			return sameOr(exe, filepath.FromSlash(slash[:i]+"/apps/reaper/current/reaper.exe"))
		}
	}
	return exe
}

// sameOr is link when it names the very file exe is, else exe as it is.
func sameOr(exe, link string) string {
	was, err1 := os.Stat(exe)
	is, err2 := os.Stat(link)
	if err1 != nil || err2 != nil || !os.SameFile(was, is) {
		return exe
	}
	return link
}

// CheckedPath is path with its links resolved, refused when it holds what
// a unit's or a shell's command line would take apart.
func CheckedPath(exe string) (string, error) {
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if runtime.GOOS == "windows" {
		// A task's command is XML, not a shell's line: only what the task
		// scheduler itself reads into it is refused — a quote (it quotes
		// the path) and % (it expands %VAR%).
		if strings.ContainsAny(exe, "\"%") || strings.ContainsFunc(exe, unicode.IsControl) {
			return "", fmt.Errorf("this binary's path %q holds a quote, a %% or a control character, which a task's command would take apart: move it", exe)
		}
		return exe, nil
	}
	if strings.ContainsAny(exe, " \"'\\%$;&|<>()`") || strings.ContainsFunc(exe, unicode.IsControl) {
		return "", fmt.Errorf("this binary's path %q holds a space, a quote, a control character or a character a unit's or a shell's command line would take apart: move it", exe)
	}
	return exe, nil
}
