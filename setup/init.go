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
	// wrote: Apply wrote the policy (Undo removes it).
	wrote bool
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
// reaper installs a service for: launchd, or systemd as init.
func HasServiceManager() bool { return runtime.GOOS == "darwin" || host.SystemdBooted() }

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
		if in.Service.User {
			what = "this user's service (reaper watch of your processes)"
		}
		out = append(out, "service  "+what+", for "+in.Exe)
	}
	return out
}

// Apply carries the steps out, in order, and stops at the first that
// fails: what was done before it stays done, and Undo says how to undo it.
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
	}
	if in.Service != nil {
		svc := *in.Service
		svc.Out, svc.Binary = in.Out, in.Exe
		if err := svc.Install(ctx); err != nil {
			return fmt.Errorf("the service: %w", err)
		}
	}
	return nil
}

// Undo are the commands that undo what Apply did.
func (in *Init) Undo() []string {
	var out []string
	if in.Service != nil {
		cmd := in.Exe + " service uninstall"
		if in.Service.User {
			cmd += " --user"
		}
		out = append(out, cmd)
	}
	for _, h := range in.Hooks {
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
