package scan

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// App is an MSIX app whose containers the policy names ([[msix]]): what
// its sessions leave in its container after it is gone or updated is
// owner-dead, its owner the app.
type App struct {
	Name string
	// Family matches the package family name (Claude_pzs8sxrjxfjjc).
	Family *regexp.Regexp
}

// app is the policy's app whose family pkg, a package full name, is of;
// nil if none.
func (c *Config) app(pkg string) *App {
	id, ok := platform.ParsePackageFullName(pkg)
	if !ok {
		return nil
	}
	for k := range c.Apps {
		if a := &c.Apps[k]; a.Family != nil && a.Family.MatchString(id.Family()) {
			return a
		}
	}
	return nil
}

// ApplyContainers finds the leftovers in the containers of the apps the
// policy names. A container none of whose live members is the app's own
// (platform.Container.Own: a package identity, or the package's own
// image) belongs to an app that is gone — updated past, or exited — and
// every tree its members head is owner-dead, the app its owner: the
// kernel's job lists them, so the fact speaks for their user. Never the
// app's own processes: a container with one alive is a running app's,
// and none of its members is a finding. A member whose identity could
// not be read is doubt, and the container is left as it is, with advice
// that says why; so is a read of the containers that failed. A live
// client's own process in it (a session) is left too.
func (r *Result) ApplyContainers() {
	if len(r.cfg.Apps) == 0 {
		return
	}
	s := r.Tree.Snap
	cs, err := s.Containers()
	if err != nil {
		r.Advice = append(r.Advice, Advice{ID: "msix-containers-unread", Severity: "warning",
			Evidence: fmt.Sprintf("the MSIX containers could not be read (%v): their leftovers were not looked for", err),
			Setting:  "run reaper as the user whose apps they are"})
		return
	}
	// Nothing of the table is indexed unless a container is the policy's
	// app's: where there are none (every scan off Windows) this costs
	// nothing.
	var at map[int]int // a finding's member pid → its finding
	n := len(r.Findings)
	for i := range cs {
		c := &cs[i]
		a := r.cfg.app(c.Package)
		if a == nil {
			continue
		}
		if at == nil {
			at = map[int]int{}
			for k := range r.Findings {
				for _, m := range r.Findings[k].Members {
					at[m.Proc.PID] = k
				}
			}
		}
		r.container(c, a, at)
	}
	if len(r.Findings) > n {
		slices.SortStableFunc(r.Findings, func(x, y Finding) int { return x.Root.PID - y.Root.PID })
	}
}

// container applies one container of app a.
func (r *Result) container(c *platform.Container, a *App, at map[int]int) {
	s := r.Tree.Snap
	id, _ := platform.ParsePackageFullName(c.Package)
	in := map[int]bool{}
	var alive []platform.ContainerMember
	for _, m := range c.Members {
		if p := s.Get(m.PID); p != nil && !p.Zombie() {
			in[m.PID] = true
			alive = append(alive, m)
		}
	}
	for _, m := range alive {
		switch {
		case c.Own(m):
			return // the app runs: its sessions are live
		case m.Unread:
			r.Advice = append(r.Advice, Advice{ID: "msix-container-unread", Severity: "warning",
				Evidence: fmt.Sprintf("%s's container %s: pid %d's package identity could not be read, so whether the app still runs in it is not known: nothing in it is a finding", a.Name, c.Job, m.PID),
				Setting:  "run reaper as the user whose app it is"})
			return
		}
	}
	installed := installedWords(c, id)
	if len(alive) == 0 {
		r.Advice = append(r.Advice, Advice{ID: "msix-container-empty", Severity: "info",
			Evidence: fmt.Sprintf("%s's container of version %s (job %s) holds no process%s: nothing in it can be ended, and while Windows keeps it the app may fail to start (0x80070020)", a.Name, id.Version, c.Job, installed),
			Setting:  "sign out of Windows, or restart it, to free the container"})
		return
	}
	for _, m := range alive {
		p := s.Get(m.PID)
		if q := s.Get(p.PPID); q != nil && in[q.PID] && !p.ParentGone() {
			continue // in its parent's tree
		}
		if r.cfg.Marks.ownClient(s, p) != nil {
			continue // a live client's own process: a session
		}
		words := fmt.Sprintf("pid %d (%s) holds %s's container of version %s (job %s)%s", p.PID, p.Comm, a.Name, id.Version, c.Job, installed)
		if k, ok := at[p.PID]; ok {
			f := &r.Findings[k]
			if f.Root != p {
				continue // in the tree of a finding already
			}
			f.claimed()
			if f.Owner == "" { // a client's own evidence names its owner first
				f.Owner = a.Name
			}
			if !f.Has(OwnerDead) {
				f.Reasons = append(f.Reasons, OwnerDead)
			}
			f.Evidence = append(f.Evidence, words)
			f.RootSpeaks = true
			continue
		}
		f := Finding{Root: p, Reasons: []Reason{OwnerDead}, Evidence: []string{words}, Owner: a.Name, RootSpeaks: true}
		f.Kind = r.cfg.Classify(s, p)
		r.members(&f, s.Index(p.PID))
		for _, m := range f.Members {
			at[m.Proc.PID] = len(r.Findings)
		}
		r.Findings = append(r.Findings, f)
	}
}

// installedWords says what is installed of c's family against c's own
// version: the words that tell an update's leftover from an exited app's.
func installedWords(c *platform.Container, id platform.PackageID) string {
	if c.Installed == nil {
		return ", and no process of the app runs in it (none carries its package identity); the installed version was not read"
	}
	var versions []string
	for _, full := range c.Installed {
		if i, ok := platform.ParsePackageFullName(full); ok && (i.Arch == id.Arch || i.Arch == "neutral") {
			versions = append(versions, i.Version)
		}
	}
	switch {
	case len(versions) == 0:
		return "; the package is no longer installed, and no process of the app runs in it"
	case len(versions) == 1 && versions[0] == id.Version:
		return ", and no process of the app runs in it (none carries its package identity): while it lives the app cannot start again"
	default:
		return fmt.Sprintf("; the installed version is %s; while it lives the new version cannot start", strings.Join(versions, ", "))
	}
}
