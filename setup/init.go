package setup

import (
	"context"
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
	"github.com/orphanreaper/reaper/platform/host"
)

// Init is `reaper init`: a reaper that acts, in one step — the policy
// written where a run reads it (unless one is there), the session-start
// hook of each client found here, and the service — after its plan was
// shown. It never replaces a policy, and each part is undone by the
// command Undo names.
type Init struct {
	// PolicyPath is where a run of this user reads its policy; Policy is
	// what is written there when no file is (the shipped example).
	PolicyPath string
	Policy     []byte
	// Hooks are the clients whose hooks are installed, each with its
	// settings file.
	Hooks []HookAt
	// Service is installed unless nil.
	Service *Service
	// Exe is the binary the hooks and the service run.
	Exe string
	Out io.Writer
	// wrote: Apply wrote the policy (Undo removes it); hooked the hooks
	// it installed, served whether it installed the service: Undo names
	// only what was done.
	wrote  bool
	hooked []HookAt
	served bool
}

// HookAt is a client's hook and where its settings are.
type HookAt struct {
	Client   client.Info
	Settings string
}

// FindHooks are the clients of cs that take a session hook whose
// settings dir exists in this account: the clients in use here.
func FindHooks(cs client.Set, getenv func(string) string, home string) []HookAt {
	var out []HookAt
	for _, c := range cs.All() {
		in := c.Info()
		if in.Hook == nil {
			continue
		}
		path, err := (&Hook{Client: in}).Settings(getenv, home)
		if err != nil {
			continue
		}
		if st, err := os.Stat(filepath.Dir(path)); err == nil && st.IsDir() {
			out = append(out, HookAt{in, path})
		}
	}
	return out
}

// HasServiceManager reports whether this host runs a service manager
// reaper installs a service for: launchd, systemd as init, or Windows'
// Task Scheduler.
func HasServiceManager() bool {
	return runtime.GOOS == "darwin" || runtime.GOOS == "windows" || host.SystemdBooted()
}

// PolicyExists reports whether a policy is at PolicyPath already (it is
// kept, and what the plan shows is its own).
func (in *Init) PolicyExists() bool {
	_, err := os.Stat(in.PolicyPath)
	return !errors.Is(err, fs.ErrNotExist)
}

// Steps says what Apply will do, a line each.
func (in *Init) Steps() []string {
	var out []string
	if in.PolicyExists() {
		out = append(out, fmt.Sprintf("keep     %s (a policy is there: it is what acts)", in.PolicyPath))
	} else {
		out = append(out, fmt.Sprintf("write    %s (the shipped example: it signals only what evidence proves abandoned)", in.PolicyPath))
	}
	for _, h := range in.Hooks {
		out = append(out, fmt.Sprintf("hook     %s's %s, in %s", h.Client.Title, h.Client.Hook.Event, h.Settings))
	}
	if in.Service != nil {
		what := "the system's service (reaper watch as root)"
		switch {
		case in.Service.User && runtime.GOOS == "windows":
			what = "this user's logon task " + TaskName + " (reaper watch of your processes, from Task Scheduler)"
		case in.Service.User:
			what = "this user's service (reaper watch of your processes)"
		}
		out = append(out, "service  "+what+", for "+in.Exe)
	}
	return out
}

// Check tries every step as a dry run, before anything is changed: the
// policy's directory can be made and written, each client's settings read
// and edited in their own format, the service planned (its manager there,
// its binary one the service may run). The first step that could not be
// done is the error, and Apply is not to be run: init does all of it or
// none.
func (in *Init) Check(ctx context.Context) error {
	if !in.PolicyExists() {
		dir := filepath.Dir(in.PolicyPath)
		for {
			if _, err := os.Stat(dir); err == nil || dir == filepath.Dir(dir) {
				break
			}
			dir = filepath.Dir(dir)
		}
		if err := platform.Writable(dir); err != nil {
			return fmt.Errorf("the policy: %s cannot be written (%s: %v)", in.PolicyPath, dir, err)
		}
	}
	for _, h := range in.Hooks {
		hk := &Hook{Client: h.Client, Out: io.Discard, DryRun: true}
		if err := hk.Install(h.Settings, in.Exe); err != nil {
			return fmt.Errorf("%s's hook: %w", h.Client.Title, err)
		}
	}
	if in.Service != nil {
		svc := *in.Service
		svc.Out, svc.Binary, svc.DryRun = io.Discard, in.Exe, true
		if err := svc.Install(ctx); err != nil {
			return fmt.Errorf("the service: %w", err)
		}
	}
	return nil
}

// Apply carries the steps out, in order (Check first), and stops at the
// first that fails: what was done before it stays done, and Undo says how
// to undo it.
func (in *Init) Apply(ctx context.Context) error {
	if !in.PolicyExists() {
		if err := os.MkdirAll(filepath.Dir(in.PolicyPath), 0o755); err != nil {
			return err
		}
		if err := platform.WriteFileAtomic(in.PolicyPath, in.Policy, 0o644); err != nil {
			return err
		}
		in.wrote = true
		fmt.Fprintf(in.Out, "wrote      %s\n", in.PolicyPath)
	}
	for _, h := range in.Hooks {
		hk := &Hook{Client: h.Client, Out: in.Out}
		if err := hk.Install(h.Settings, in.Exe); err != nil {
			return fmt.Errorf("%s's hook: %w", h.Client.Title, err)
		}
		in.hooked = append(in.hooked, h)
	}
	if in.Service != nil {
		svc := *in.Service
		svc.Out, svc.Binary = in.Out, in.Exe
		err := svc.Install(ctx)
		in.served = true // files may be written before a start that fails: uninstall removes what is there
		if err != nil {
			return fmt.Errorf("the service: %w", err)
		}
	}
	return nil
}

// RunsFrom says what runs reaper from now on, by what Apply set up: the
// service, and the hooks at each session's start; or, where nothing does,
// the ways that would.
func (in *Init) RunsFrom() string {
	var parts []string
	if in.served {
		what := "the system's service (reaper watch as root) reaps as owners exit"
		switch {
		case in.Service.User && runtime.GOOS == "windows":
			what = "your logon task (reaper watch) reaps your processes as their owners exit"
		case in.Service.User:
			what = "your service (reaper watch) reaps your processes as their owners exit"
		}
		parts = append(parts, what)
	}
	if len(in.hooked) > 0 {
		var names []string
		for _, h := range in.hooked {
			names = append(names, h.Client.Title)
		}
		parts = append(parts, "a quick reap runs at the start of each session of "+strings.Join(names, ", "))
	}
	if len(parts) == 0 {
		return "Nothing will run reaper on its own here: no service was installed and no client's settings were found. Run 'reaper reap' when you want, start a client as 'reaper run -- CLIENT' (it reaps what the client leaves when it exits), or install a hook once a client is set up ('reaper hook install CLIENT')."
	}
	return "From now on, by " + in.PolicyPath + ": " + strings.Join(parts, "; ") + "."
}

// Undo are the commands that undo what Apply did.
func (in *Init) Undo() []string {
	var out []string
	if in.served {
		cmd := in.Exe + " service uninstall"
		if in.Service.User {
			cmd += " --user"
		}
		out = append(out, cmd)
	}
	for _, h := range in.hooked {
		out = append(out, in.Exe+" hook uninstall "+h.Client.Name)
	}
	if in.wrote {
		out = append(out, "rm "+in.PolicyPath)
	}
	return out
}

// PolicyNote is what a hook or service install adds when no policy is at
// path, where its reap reads one: that reap only reports. "" when one is.
func PolicyNote(path string) string {
	if _, err := os.Stat(path); err == nil {
		return ""
	}
	return fmt.Sprintf("note: no policy at %s: the embedded default only reports. 'reaper init' shows what the example policy would do here and sets it up", path)
}
