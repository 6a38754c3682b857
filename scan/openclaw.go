package scan

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/openclaw"
)

// ApplyOpenClawGateways attributes to OpenClaw's gateway the findings whose
// root carries OpenClaw's markers and nothing else that names an owner: a
// gateway run in the foreground (`openclaw gateway run`) puts no
// OPENCLAW_GATEWAY_SERVICE_PID on its children, so after it is SIGKILLed
// its survivors — a PTY shell that ignores SIGHUP, a double-forked daemon,
// an ACP adapter and the claude it runs — would be merely reparented and
// untracked. Their state dir is the root's OPENCLAW_STATE_DIR, else its
// user's ~/.openclaw; the newest gateway lock there names the gateway.
// An exec child carries OPENCLAW_SHELL; an ACP adapter only the state dir,
// which a user may also have exported in a shell of their own, so such a
// root is tied only when it started after that gateway took its lock
// (while it ran). When that gateway is gone (its pid gone, another
// process now, a lock of another boot) the finding is owner-dead with the
// lock and the pid as evidence; when it lives, the tree is its leak,
// attributed to it. A state dir speaks only for its owner's processes
// (gatewayFor).
func (r *Result) ApplyOpenClawGateways(gws []openclaw.Gateway) {
	if len(gws) == 0 {
		return
	}
	s := r.Tree.Snap
	for k := range r.Findings {
		f := &r.Findings[k]
		if !f.Has(Untracked) {
			continue // attributed already, by a stronger marker or a ledger
		}
		shell, hasShell := s.Getenv(f.Root, openclaw.EnvShell)
		dir, hasDir := s.Getenv(f.Root, openclaw.EnvStateDir)
		if !hasShell && !hasDir {
			continue
		}
		gw := r.gatewayFor(f, gws)
		if gw == nil {
			continue
		}
		marker := "OPENCLAW_SHELL=" + shell
		if !hasShell {
			started := s.Taken.Add(-s.Age(f.Root))
			if gw.Created.IsZero() || started.Before(gw.Created) {
				continue // it may be older than that gateway: not shown to be its
			}
			marker = fmt.Sprintf("OPENCLAW_STATE_DIR=%s, started after the gateway took its lock", dir)
		}
		f.Owner, f.OwnerPID = gw.Owner.Name, gw.Owner.PID
		f.Reasons = slices.DeleteFunc(f.Reasons, func(x Reason) bool { return x == Untracked })
		f.Evidence = slices.DeleteFunc(f.Evidence, func(e string) bool { return e == untrackedEvidence })
		l := ledger.Ledger{Owner: gw.Owner, Speaker: uint32(gw.UID), Source: gw.Lock}
		if gone, why := r.OwnerGone(&l); gone {
			f.Reasons = append(f.Reasons, OwnerDead)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, state dir %s: the gateway lock %s names pid %d: %s",
				marker, gw.StateDir, gw.Lock, gw.Owner.PID, why))
		} else {
			f.Evidence = append(f.Evidence, fmt.Sprintf("%s, state dir %s: left behind by the live gateway pid %d (lock %s)",
				marker, gw.StateDir, gw.Owner.PID, gw.Lock))
		}
	}
}

// gatewayFor finds the gateway of the state dir f's root belongs to. A
// state dir speaks only for its owner's processes: a root process that
// names a user's state dir is not that user's gateway's to claim.
func (r *Result) gatewayFor(f *Finding, gws []openclaw.Gateway) *openclaw.Gateway {
	s := r.Tree.Snap
	if dir, ok := s.Getenv(f.Root, openclaw.EnvStateDir); ok && dir != "" {
		for i := range gws {
			if gws[i].StateDir == filepath.Clean(dir) {
				if !r.speaks(uint32(gws[i].UID), f.Root, "the gateway lock "+gws[i].Lock) {
					return nil
				}
				return &gws[i]
			}
		}
		return nil
	}
	uid := s.UID(f.Root)
	for i := range gws {
		if gws[i].Default && uint32(gws[i].UID) == uid {
			return &gws[i]
		}
	}
	return nil
}

// supervised marks a finding whose root is one of OpenClaw's supervisor
// processes: its kind is the kind of the first command it anchors (the
// first member, in pre-order, that is not a supervisor), and it is
// reported as OpenClaw's own cleanup in progress.
func (r *Result) supervised(f *Finding) {
	s := r.Tree.Snap
	name := openclaw.SupervisorRole(s.CommandLine(f.Root))
	if name == "" {
		return
	}
	f.Supervisor = name
	for _, m := range f.Members[1:] {
		cmd := s.CommandLine(m.Proc)
		if openclaw.SupervisorRole(cmd) == "" {
			f.Kind = Classify(s, m.Proc)
			f.Evidence = append(f.Evidence, fmt.Sprintf("the root is the %s, anchoring %q: OpenClaw kills what it tracks within about 5 s of losing its gateway", name, cmd))
			return
		}
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("the root is the %s, anchoring nothing now", name))
}
