package watch

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/platform/host"
	pwatch "github.com/orphanreaper/reaper/platform/watch"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// Under scopes cfg to what the init at pid adopted and its descendants —
// the watch `reaper run` runs inside while its command lives: the init is
// a subreaper to the scan (by its exact command line), and only the
// findings whose root descends from it are kept (Config.Only).
func Under(cfg *run.Config, pid int) error {
	argv, err := platform.ReadCmdline(pid)
	if err != nil {
		return fmt.Errorf("--under %d: %w", pid, err)
	}
	cmd := strings.TrimRight(strings.Join(argv, " "), " ")
	self, err := regexp.Compile("^" + regexp.QuoteMeta(cmd) + "$")
	if err != nil {
		return err
	}
	pol := *cfg.Policy
	pol.Subreapers = append(append([]policy.Subreaper{}, cfg.Policy.Subreapers...), policy.Subreaper{Subreaper: scan.Subreaper{Cmdline: self}})
	cfg.Policy = &pol
	cfg.Only = func(f *scan.Finding) bool { return descends(f.Root, pid) }
	return nil
}

// descends reports whether p is below pid, by its parents as the kernel
// has them now (at most 64 steps).
func descends(p *platform.Process, pid int) bool {
	ppid := p.PPID
	for range 64 {
		switch ppid {
		case pid:
			return true
		case 0, 1:
			return false
		}
		q, err := platform.ReadStat(ppid)
		if err != nil {
			return false
		}
		ppid = q.PPID
	}
	return false
}

// Adoptions tells, until ctx ends, when the process at pid has a child it
// did not have at the last look and did not start for itself (host.Own,
// a reader child): an init's adoption. A process's parent dying sends
// its new parent nothing, and in a PID namespace the kernel tells no one
// of a fork (the proc connector serves the initial namespaces alone), so
// it looks (platform.ReadFamily) when something may have changed:
//
//   - the init reaped an adopted child (reaped): that child's children,
//     if it had any, are the init's now;
//   - a process below the init that had children at the last look
//     exited: a pidfd on each says so at once;
//   - something forked (forked: the watch's fork count says so, at most
//     once a second): a new parent may be below the init, to be watched
//     from now.
//
// Idle, nothing forks and nothing exits, and it looks at nothing. Where
// forks cannot be told of (forked closed), exits not watched (no
// pidfds), or the parents below are more than maxWatchedParents, it also
// looks every second.
func Adoptions(ctx context.Context, pid int, forked <-chan struct{}, reaped <-chan struct{}) <-chan struct{} {
	out := make(chan struct{}, 1)
	go func() {
		// every is the look every second, where the events cannot say
		// it all (nil: none).
		var every *time.Ticker
		var tick <-chan time.Time
		everySecond := func() {
			if every == nil {
				every = time.NewTicker(time.Second)
				tick = every.C
			}
		}
		defer func() {
			if every != nil {
				every.Stop()
			}
		}()
		parents, err := pwatch.New()
		var exited <-chan pwatch.Target
		if err == nil {
			defer parents.Close()
			exited = parents.C()
		} else {
			everySecond()
		}
		var seen map[int]bool
		look := func() {
			f := platform.ReadFamily(pid)
			if seen != nil {
				for c := range f.Children {
					if !seen[c] && !host.Own(c) {
						select {
						case out <- struct{}{}:
						default:
						}
						break
					}
				}
			}
			seen = f.Children
			if parents == nil {
				return
			}
			targets := make([]pwatch.Target, 0, min(len(f.Parents), maxWatchedParents))
			for _, p := range f.Parents {
				if len(targets) == maxWatchedParents {
					// Past the bound (any process below may fork
					// parents without end): a look every second too.
					everySecond()
					break
				}
				if !host.Own(p.PID) {
					targets = append(targets, pwatch.Target{PID: p.PID, StartTicks: p.StartTicks})
				}
			}
			parents.Set(targets)
		}
		look()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-forked:
				if !ok {
					forked = nil
					everySecond() // no word of forks
				}
			case <-tick:
			case <-reaped:
			case <-exited:
			}
			look()
		}
	}()
	return out
}

// maxWatchedParents bounds the pidfds Adoptions holds: one a parent below
// the init, each a descriptor of this process's.
const maxWatchedParents = 1024
