package setup

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/orphanreaper/reaper/packaging"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
)

// UsageError is a request setup cannot carry out as asked (a system
// service by a user): a mistake on the command line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Service is one `reaper service install` or `uninstall`.
type Service struct {
	// User: the user's service (a systemd --user unit, a LaunchAgent),
	// not the system's.
	User bool
	// Timer: a reap every minute rather than `reaper watch`.
	Timer bool
	// DryRun says what would be written and run, and changes nothing.
	DryRun bool
	// Binary is the binary the service runs, when not this one.
	Binary string
	// Root prefixes every path written or removed, and no service manager
	// is asked anything: for tests.
	Root string
	// Out is where each step is said.
	Out io.Writer
	// PolicyPath is where the service's reap reads its policy: when none
	// is there, Install says it would only report ("": not said).
	PolicyPath string
	// Task names the logon task on Windows ("": TaskName): a test's own,
	// so that it never touches the user's; registered, it is not started
	// (the user's is, at once).
	Task string
}

// file is one file the service is made of.
type file struct {
	path string
	data []byte
}

// command is one command of the service manager's; optional: its failure
// is only said (a bootout of a job not loaded, a disable of a unit not
// enabled).
type command struct {
	argv     []string
	optional bool
}

// plan is what install writes (files, and dirs it makes for the service's
// logs) and the commands that enable it, and what uninstall runs before it
// removes the files.
type plan struct {
	files  []file
	dirs   []string
	enable []command
	remove []command
}

// plan builds the service for the binary at exe, on goos.
func (s *Service) plan(goos, exe string) (*plan, error) {
	if goos == "windows" {
		return s.task(exe)
	}
	if !s.User && os.Geteuid() != 0 && s.Root == "" {
		return nil, &UsageError{"a system service is root's to install: run as root, or pass --user"}
	}
	home, err := os.UserHomeDir()
	if err != nil && s.User {
		return nil, fmt.Errorf("this user's service: %w", err)
	}
	switch goos {
	case "linux":
		return s.systemd(exe, home)
	case "darwin":
		return s.launchd(exe, home)
	}
	return nil, fmt.Errorf("reaper service knows systemd and launchd, not %s: run 'reaper reap --quiet' every minute from cron", goos)
}

func (s *Service) systemd(exe, home string) (*plan, error) {
	src, dst := "systemd/", SystemUnitDir
	ctl := []string{"systemctl"}
	if s.User {
		src, dst = "systemd/user/", UserUnitDir(os.Getenv("XDG_CONFIG_HOME"), home)
		ctl = []string{"systemctl", "--user"}
	}
	names, start, other := []string{WatchUnit}, WatchUnit, TimerUnit
	if s.Timer {
		names, start, other = []string{ReapUnit, TimerUnit}, TimerUnit, WatchUnit
	}
	p := &plan{}
	for _, name := range names {
		b, err := fs.ReadFile(packaging.Files, src+name)
		if err != nil {
			return nil, err
		}
		b = bytes.ReplaceAll(b, []byte("/usr/bin/reaper "), []byte(exe+" "))
		b = append([]byte(fmt.Sprintf("# %s for %s; `reaper service uninstall` removes it.\n", Mark, exe)), b...)
		p.files = append(p.files, file{filepath.Join(dst, name), b})
	}
	with := func(optional bool, args ...string) command {
		return command{append(append([]string{}, ctl...), args...), optional}
	}
	// The other kind is disabled first: the two conflict (Conflicts=).
	p.enable = []command{with(false, "daemon-reload"), with(true, "disable", "--now", other), with(false, "enable", "--now", start)}
	p.remove = []command{with(true, "disable", "--now", start)}
	return p, nil
}

func (s *Service) launchd(exe, home string) (*plan, error) {
	label, dir, domain := Label(s.Timer, s.User), DaemonDir, "system"
	logs := paths.SystemLogDir
	if s.User {
		dir, domain = filepath.Join(home, "Library", "LaunchAgents"), "gui/"+strconv.Itoa(os.Geteuid())
		logs = paths.UserLogDir("darwin", home, os.Getenv)
	}
	b, err := fs.ReadFile(packaging.Files, "launchd/"+label+".plist")
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte("<string>/usr/local/bin/reaper</string>"), []byte("<string>"+xmlText(exe)+"</string>"))
	log := xmlText(filepath.Join(logs, "reaper.log"))
	if !bytes.Contains(b, []byte("StandardOutPath")) {
		keys := fmt.Sprintf("\t<key>StandardOutPath</key>\n\t<string>%s</string>\n\t<key>StandardErrorPath</key>\n\t<string>%s</string>\n</dict>", log, log)
		b = bytes.Replace(b, []byte("</dict>"), []byte(keys), 1)
	}
	b = bytes.Replace(b, []byte("<plist "), []byte(fmt.Sprintf("<!-- %s for %s; `reaper service uninstall` removes it. -->\n<plist ", Mark, xmlText(exe))), 1)
	path := filepath.Join(dir, label+".plist")
	target := domain + "/" + label
	return &plan{
		files:  []file{{path, b}},
		dirs:   []string{logs},
		enable: []command{{[]string{"launchctl", "bootout", target}, true}, {[]string{"launchctl", "bootstrap", domain, path}, false}},
		remove: []command{{[]string{"launchctl", "bootout", target}, true}},
	}, nil
}

// TaskName is the per-user task `reaper service install --user` registers
// on Windows.
const TaskName = "reaper-watch"

// task is this user's logon task on Windows: Task Scheduler starts
// `reaper watch --quiet` at the user's logon, with the user's own rights
// (an interactive token, least privilege: no administrator, no stored
// password), restarts it a minute after a failure, and never stops it for
// a time limit or a battery. It runs under a pseudo-console host with no
// window (conhost.exe --headless, Windows 10 1809 and later): a console
// program a task starts otherwise opens a window that closing would end.
// The task's XML is kept in the user's state dir, beside the audit log:
// `schtasks /Create /XML` registers it, and uninstall finds it by its
// mark. A system-wide service (every user's leftovers) and the timer are
// not built for Windows yet.
func (s *Service) task(exe string) (*plan, error) {
	switch {
	case !s.User:
		return nil, &UsageError{"a Windows service for every user's leftovers is not built yet: 'reaper service install --user' registers this user's logon task, which runs reaper watch"}
	case s.Timer:
		return nil, &UsageError{"--timer: on Windows the logon task runs reaper watch, which costs nothing while nothing exits: install it without --timer"}
	}
	dir := filepath.Dir(paths.Current().Lock) // %LOCALAPPDATA%\reaper
	if paths.Current().Lock == "" {
		return nil, errors.New("this user's logon task: no %LOCALAPPDATA% to keep its XML in")
	}
	who := "the user who installed it"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	name := cmp.Or(s.Task, TaskName)
	b := []byte(fmt.Sprintf(taskXML, xmlText(Mark+" for "+exe+"; `reaper service uninstall --user` removes it"), xmlText(name), xmlText(who), xmlText(who), xmlText(exe)))
	path := filepath.Join(dir, name+".xml")
	schtasks := func(optional bool, args ...string) command {
		return command{append([]string{"schtasks"}, args...), optional}
	}
	p := &plan{
		files:  []file{{path, utf16File(b)}},
		enable: []command{schtasks(false, "/Create", "/TN", name, "/XML", path, "/F")},
		remove: []command{schtasks(true, "/End", "/TN", name), schtasks(false, "/Delete", "/TN", name, "/F")},
	}
	if s.Task == "" {
		p.enable = append(p.enable, schtasks(true, "/Run", "/TN", name)) // started now, not at the next logon
	}
	return p, nil
}

// taskXML is the task's definition (Task Scheduler schema 1.2): its
// description, name, the user whose logon starts it and who it runs as,
// and the binary.
const taskXML = `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>%s</Description>
    <URI>\%s</URI>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
      <UserId>%s</UserId>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>%s</UserId>
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <RestartOnFailure>
      <Interval>PT1M</Interval>
      <Count>999</Count>
    </RestartOnFailure>
    <Enabled>true</Enabled>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>%%SystemRoot%%\System32\conhost.exe</Command>
      <Arguments>--headless "%s" watch --quiet</Arguments>
    </Exec>
  </Actions>
</Task>
`

// utf16File is b, UTF-8, as the UTF-16LE file with a byte-order mark
// that Task Scheduler reads (and writes: schtasks /Query /XML), its lines
// ended CRLF.
func utf16File(b []byte) []byte {
	u := utf16.Encode([]rune(strings.ReplaceAll(string(b), "\n", "\r\n")))
	out := make([]byte, 2, 2+2*len(u))
	out[0], out[1] = 0xff, 0xfe
	for _, c := range u {
		out = append(out, byte(c), byte(c>>8))
	}
	return out
}

// HasMark reports whether b, a file of reaper's service, holds Mark:
// UTF-8, or UTF-16LE (a Windows task's XML).
func HasMark(b []byte) bool {
	return bytes.Contains(b, []byte(Mark)) || bytes.Contains(b, utf16File([]byte(Mark))[2:])
}

// xmlText escapes s for a plist's <string>.
func xmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Install writes, enables and starts the service.
func (s *Service) Install(ctx context.Context) error {
	exe, err := s.binary()
	if err != nil {
		return err
	}
	p, err := s.plan(runtime.GOOS, exe)
	if err != nil {
		return err
	}
	for _, f := range p.files {
		path := filepath.Join(s.Root, f.path)
		old, err := os.ReadFile(path)
		switch {
		case err == nil && bytes.Equal(old, f.data):
			fmt.Fprintf(s.Out, "unchanged  %s\n", path)
			continue
		case err == nil && !HasMark(old):
			return fmt.Errorf("%s exists and was not written by reaper service install (a package's, or yours): not replaced", path)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
		verb := "wrote    "
		if old != nil {
			verb = "replaced "
		}
		if s.DryRun {
			fmt.Fprintf(s.Out, "would write %s:\n%s\n", path, indent(string(f.data)))
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := platform.WriteFileAtomic(path, f.data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "%s  %s\n", verb, path)
	}
	for _, dir := range p.dirs {
		if !s.DryRun {
			if err := os.MkdirAll(filepath.Join(s.Root, dir), 0o755); err != nil {
				return err
			}
		}
	}
	if err := s.run(ctx, p.enable); err != nil {
		return err
	}
	if !s.DryRun && s.Root == "" && !HasServiceManager() {
		return errors.New("no service manager runs here (systemd is not this host's init): the files are written but nothing starts them. Run 'reaper watch' from what this host has — its supervisor, or a container's init ('reaper run -- CMD') — or 'reaper reap --quiet' every minute from cron; 'reaper service uninstall' removes the files")
	}
	if note := PolicyNote(s.PolicyPath); s.PolicyPath != "" && note != "" {
		fmt.Fprintln(s.Out, note)
	}
	return nil
}

// Uninstall stops, disables and removes what Install wrote — of either
// kind — and nothing else.
func (s *Service) Uninstall(ctx context.Context) error {
	exe, err := Executable()
	if err != nil {
		exe = "reaper"
	}
	var plans []*plan
	kinds := []bool{false, true}
	if runtime.GOOS == "windows" {
		kinds = kinds[:1] // the logon task alone: no timer there
	}
	for _, timer := range kinds {
		o := *s
		o.Timer = timer
		p, err := o.plan(runtime.GOOS, exe)
		if err != nil {
			return err
		}
		plans = append(plans, p)
	}
	for _, p := range plans {
		var ours []string
		for _, f := range p.files {
			path := filepath.Join(s.Root, f.path)
			if old, err := os.ReadFile(path); err == nil && HasMark(old) {
				ours = append(ours, path)
			}
		}
		if len(ours) == 0 {
			continue
		}
		if err := s.run(ctx, p.remove); err != nil {
			return err
		}
		for _, path := range ours {
			if s.DryRun {
				fmt.Fprintf(s.Out, "would remove %s\n", path)
				continue
			}
			if err := os.Remove(path); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "removed    %s\n", path)
		}
	}
	return nil
}

// run runs the service manager's commands, or says them (a dry run, a
// test's root, no service manager running).
func (s *Service) run(ctx context.Context, cmds []command) error {
	manager := HasServiceManager()
	for _, c := range cmds {
		line := strings.Join(c.argv, " ")
		switch {
		case s.DryRun || s.Root != "":
			fmt.Fprintf(s.Out, "would run  %s\n", line)
			continue
		case !manager:
			fmt.Fprintf(s.Out, "not run    %s (systemd is not this host's init)\n", line)
			continue
		}
		_, err := host.RunTool(ctx, c.argv[0], c.argv[1:]...)
		switch {
		case err == nil:
			fmt.Fprintf(s.Out, "ran        %s\n", line)
		case c.optional:
			fmt.Fprintf(s.Out, "ran        %s (nothing to do)\n", line)
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
