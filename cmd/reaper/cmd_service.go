package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/orphanreaper/reaper/packaging"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	"github.com/orphanreaper/reaper/run"
)

// serviceOptions are the flags of `reaper service install|uninstall`.
type serviceOptions struct {
	user   bool
	timer  bool
	dryRun bool
	// binary is the binary the service runs, when not this one.
	binary string
	// root prefixes every path written or removed, and no service manager
	// is asked anything: for tests (hidden).
	root string
}

func newServiceCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install or remove reaper's background service for this binary",
		Long: `service writes, enables and starts the background service the packages
give — for this binary, wherever it is (npm, go install, an archive):

  Linux    a systemd unit: /etc/systemd/system as root, else the user's
           ~/.config/systemd/user (--user); reaper-watch.service, or
           reaper.service and reaper.timer with --timer
  macOS    a launchd plist: a LaunchDaemon in /Library/LaunchDaemons as
           root, else a LaunchAgent in ~/Library/LaunchAgents, its log in
           ~/Library/Logs/reaper

Each file is the shipped one with this binary's absolute path (or
--binary's), and says it was written by 'reaper service install'.

A system service runs as root, so it refuses a binary any other user
could replace — the file, or a directory above it, owned by a user or
writable by group or others, as 'go install' (~/go/bin), a user's npm
prefix or Homebrew's prefix leave it: whoever can replace it would run
code as root at the next start. Copy it where only root writes, and
install that copy:

  sudo install -m 0755 "$(command -v reaper)" /usr/local/bin/reaper
  sudo /usr/local/bin/reaper service install

or pass --binary with a root-owned copy. The .deb, .rpm and a root npm
install (/usr/lib/node_modules) are root's already. Running it again changes
nothing that is already so; --dry-run prints what it would write and run.
'reaper service uninstall' stops, disables and removes what install
wrote, and nothing else. 'reaper doctor' checks the result.`,
	}
	cmd.AddCommand(newServiceInstallCommand(g), newServiceUninstallCommand(g))
	return cmd
}

func serviceFlags(cmd *cobra.Command, opts *serviceOptions) {
	f := cmd.Flags()
	f.BoolVar(&opts.user, "user", run.EUID() != 0, "this user's service (the default when not root)")
	f.BoolVar(&opts.dryRun, "dry-run", false, "print what would be written and run, and change nothing")
	f.StringVar(&opts.root, "root", "", "write below `DIR` and ask no service manager (tests)")
	f.MarkHidden("root")
}

func newServiceInstallCommand(g *globalOptions) *cobra.Command {
	var opts serviceOptions
	cmd := &cobra.Command{
		Use:   "install [--user] [--timer] [--dry-run]",
		Short: "Write, enable and start the service for this binary",
		Example: `  sudo reaper service install          # every user's, reaper watch as root
  sudo reaper service install --binary /usr/local/bin/reaper
  reaper service install --user         # this user's processes only
  reaper service install --timer --dry-run`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServiceInstall(cmd.Context(), &opts, g)
		},
	}
	serviceFlags(cmd, &opts)
	cmd.Flags().BoolVar(&opts.timer, "timer", false, "a reap every minute (reaper.timer; on macOS StartInterval) instead of reaper watch")
	cmd.Flags().StringVar(&opts.binary, "binary", "", "the reaper binary the service runs (`PATH`, absolute), instead of this one: for a system service, one only root can replace")
	return cmd
}

func newServiceUninstallCommand(g *globalOptions) *cobra.Command {
	var opts serviceOptions
	cmd := &cobra.Command{
		Use:   "uninstall [--user] [--dry-run]",
		Short: "Stop, disable and remove what service install wrote",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServiceUninstall(cmd.Context(), &opts, g)
		},
	}
	serviceFlags(cmd, &opts)
	return cmd
}

// serviceMark is the line every file service install writes begins with
// (after an XML declaration): uninstall removes only files that carry it.
const serviceMark = "Written by `reaper service install`"

// serviceFile is one file the service is made of.
type serviceFile struct {
	path string
	data []byte
}

// serviceCmd is one command of the service manager's; optional: its
// failure is only said (a bootout of a job not loaded, a disable of a unit
// not enabled).
type serviceCmd struct {
	argv     []string
	optional bool
}

// serviceSet is what install writes (files, and dirs it makes for the
// service's logs) and the commands that enable it, and what uninstall
// runs before it removes the files.
type serviceSet struct {
	files  []serviceFile
	dirs   []string
	enable []serviceCmd
	remove []serviceCmd
}

// serviceFor builds the service for the binary at exe, on goos.
func serviceFor(goos string, opts *serviceOptions, exe string) (*serviceSet, error) {
	if !opts.user && run.EUID() != 0 && opts.root == "" {
		return nil, usagef("a system service is root's to install: run as root, or pass --user")
	}
	home, err := os.UserHomeDir()
	if err != nil && opts.user {
		return nil, fmt.Errorf("this user's service: %w", err)
	}
	switch goos {
	case "linux":
		return systemdService(opts, exe, home)
	case "darwin":
		return launchdService(opts, exe, home)
	}
	return nil, fmt.Errorf("reaper service knows systemd and launchd, not %s: run 'reaper reap --quiet' every minute from cron", goos)
}

func systemdService(opts *serviceOptions, exe, home string) (*serviceSet, error) {
	src, dst := "systemd/", "/etc/systemd/system"
	ctl := []string{"systemctl"}
	if opts.user {
		src = "systemd/user/"
		config := os.Getenv("XDG_CONFIG_HOME")
		if !filepath.IsAbs(config) {
			config = filepath.Join(home, ".config")
		}
		dst, ctl = filepath.Join(config, "systemd", "user"), []string{"systemctl", "--user"}
	}
	names, start, other := []string{"reaper-watch.service"}, "reaper-watch.service", "reaper.timer"
	if opts.timer {
		names, start, other = []string{"reaper.service", "reaper.timer"}, "reaper.timer", "reaper-watch.service"
	}
	set := &serviceSet{}
	for _, name := range names {
		b, err := fs.ReadFile(packaging.Files, src+name)
		if err != nil {
			return nil, err
		}
		b = bytes.ReplaceAll(b, []byte("/usr/bin/reaper "), []byte(exe+" "))
		b = append([]byte(fmt.Sprintf("# %s for %s; `reaper service uninstall` removes it.\n", serviceMark, exe)), b...)
		set.files = append(set.files, serviceFile{filepath.Join(dst, name), b})
	}
	with := func(optional bool, args ...string) serviceCmd {
		return serviceCmd{append(append([]string{}, ctl...), args...), optional}
	}
	// The other kind is disabled first: the two conflict (Conflicts=).
	set.enable = []serviceCmd{with(false, "daemon-reload"), with(true, "disable", "--now", other), with(false, "enable", "--now", start)}
	set.remove = []serviceCmd{with(true, "disable", "--now", start)}
	return set, nil
}

func launchdService(opts *serviceOptions, exe, home string) (*serviceSet, error) {
	label, dir, domain := "dev.orphanreaper.reaper-watch", "/Library/LaunchDaemons", "system"
	logs := "/var/log/reaper"
	if opts.timer {
		label = "dev.orphanreaper.reaper"
	}
	if opts.user {
		label += ".agent"
		dir, domain = filepath.Join(home, "Library", "LaunchAgents"), "gui/"+strconv.Itoa(int(run.EUID()))
		logs = filepath.Join(home, "Library", "Logs", "reaper")
	}
	b, err := fs.ReadFile(packaging.Files, "launchd/"+label+".plist")
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte("<string>/usr/local/bin/reaper</string>"), []byte("<string>"+xmlText(exe)+"</string>"))
	logKeys := fmt.Sprintf("\t<key>StandardOutPath</key>\n\t<string>%s</string>\n\t<key>StandardErrorPath</key>\n\t<string>%s</string>\n</dict>",
		xmlText(filepath.Join(logs, "reaper.log")), xmlText(filepath.Join(logs, "reaper.log")))
	if !bytes.Contains(b, []byte("StandardOutPath")) {
		b = bytes.Replace(b, []byte("</dict>"), []byte(logKeys), 1)
	}
	b = bytes.Replace(b, []byte("<plist "), []byte(fmt.Sprintf("<!-- %s for %s; `reaper service uninstall` removes it. -->\n<plist ", serviceMark, xmlText(exe))), 1)
	path := filepath.Join(dir, label+".plist")
	target := domain + "/" + label
	return &serviceSet{
		files:  []serviceFile{{path, b}},
		dirs:   []string{logs},
		enable: []serviceCmd{{[]string{"launchctl", "bootout", target}, true}, {[]string{"launchctl", "bootstrap", domain, path}, false}},
		remove: []serviceCmd{{[]string{"launchctl", "bootout", target}, true}},
	}, nil
}

// xmlText escapes s for a plist's <string>.
func xmlText(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	return r.Replace(s)
}

// serviceBinary is the binary the service will run: --binary's, or this
// one's, links resolved. A system service runs it as root, so it must be
// a file only root can replace (platform.WhoCanReplace): otherwise the
// user who can replace it is root at the next start.
func serviceBinary(opts *serviceOptions) (string, error) {
	exe, err := executable()
	if opts.binary != "" {
		exe, err = checkedPath(opts.binary)
		if err == nil && !filepath.IsAbs(opts.binary) {
			err = usagef("--binary %s: want an absolute path", opts.binary)
		}
		if err == nil {
			if st, serr := os.Stat(exe); serr != nil {
				err = fmt.Errorf("--binary: %w", serr)
			} else if !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
				err = fmt.Errorf("--binary %s: not an executable file", exe)
			}
		}
	}
	if err != nil || opts.user {
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

// executable is this binary's absolute path, links resolved: what a unit
// runs must not move when a link (npm's bin, Homebrew's opt) is repointed
// mid-upgrade — it is resolved now, and install is run again after one.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return checkedPath(exe)
}

// checkedPath is path with its links resolved, refused when it holds what
// a unit's or a shell's command line would take apart.
func checkedPath(exe string) (string, error) {
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if strings.ContainsAny(exe, " \"'\\%$;&|<>()`") || strings.ContainsFunc(exe, unicode.IsControl) {
		return "", fmt.Errorf("this binary's path %q holds a space, a quote, a control character or a character a unit's or a shell's command line would take apart: move it", exe)
	}
	return exe, nil
}

func runServiceInstall(ctx context.Context, opts *serviceOptions, g *globalOptions) error {
	exe, err := serviceBinary(opts)
	if err != nil {
		return err
	}
	set, err := serviceFor(runtime.GOOS, opts, exe)
	if err != nil {
		return err
	}
	for _, f := range set.files {
		path := filepath.Join(opts.root, f.path)
		old, err := os.ReadFile(path)
		switch {
		case err == nil && bytes.Equal(old, f.data):
			fmt.Fprintf(g.stdout, "unchanged  %s\n", path)
			continue
		case err == nil && !bytes.Contains(old, []byte(serviceMark)):
			return fmt.Errorf("%s exists and was not written by reaper service install (a package's, or yours): not replaced", path)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
		verb := "wrote    "
		if old != nil {
			verb = "replaced "
		}
		if opts.dryRun {
			fmt.Fprintf(g.stdout, "would write %s:\n%s\n", path, indent(string(f.data)))
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := platform.WriteFileAtomic(path, f.data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(g.stdout, "%s  %s\n", verb, path)
	}
	for _, dir := range set.dirs {
		if !opts.dryRun {
			if err := os.MkdirAll(filepath.Join(opts.root, dir), 0o755); err != nil {
				return err
			}
		}
	}
	return runServiceCommands(ctx, opts, g, set.enable)
}

func runServiceUninstall(ctx context.Context, opts *serviceOptions, g *globalOptions) error {
	exe, err := executable()
	if err != nil {
		exe = "reaper"
	}
	// Both kinds: whichever install wrote.
	var sets []*serviceSet
	for _, timer := range []bool{false, true} {
		o := *opts
		o.timer = timer
		set, err := serviceFor(runtime.GOOS, &o, exe)
		if err != nil {
			return err
		}
		sets = append(sets, set)
	}
	for _, set := range sets {
		var ours []string
		for _, f := range set.files {
			path := filepath.Join(opts.root, f.path)
			if old, err := os.ReadFile(path); err == nil && bytes.Contains(old, []byte(serviceMark)) {
				ours = append(ours, path)
			}
		}
		if len(ours) == 0 {
			continue
		}
		if err := runServiceCommands(ctx, opts, g, set.remove); err != nil {
			return err
		}
		for _, path := range ours {
			if opts.dryRun {
				fmt.Fprintf(g.stdout, "would remove %s\n", path)
				continue
			}
			if err := os.Remove(path); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "removed    %s\n", path)
		}
	}
	return nil
}

// runServiceCommands runs the service manager's commands, or says them
// (--dry-run, --root, no service manager running).
func runServiceCommands(ctx context.Context, opts *serviceOptions, g *globalOptions, cmds []serviceCmd) error {
	manager := runtime.GOOS == "darwin" || host.SystemdBooted()
	for _, c := range cmds {
		line := strings.Join(c.argv, " ")
		switch {
		case opts.dryRun || opts.root != "":
			fmt.Fprintf(g.stdout, "would run  %s\n", line)
			continue
		case !manager:
			fmt.Fprintf(g.stdout, "not run    %s (systemd is not this host's init)\n", line)
			continue
		}
		_, err := host.RunTool(ctx, c.argv[0], c.argv[1:]...)
		switch {
		case err == nil:
			fmt.Fprintf(g.stdout, "ran        %s\n", line)
		case c.optional:
			fmt.Fprintf(g.stdout, "ran        %s (nothing to do)\n", line)
		default:
			return fmt.Errorf("%s: %w", line, err)
		}
	}
	return nil
}

// indent prefixes every line of s with four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
