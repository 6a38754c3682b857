package run

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Under scopes cfg to what the init at pid adopted and its descendants —
// the watch `reaper run` runs inside while its command lives: the init is
// a subreaper to the scan (by its exact command line), and only the
// findings whose root descends from it are kept (Config.Only).
func Under(cfg *Config, pid int) error {
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
// did not have at the last look (platform.Children), every interval: an
// init's adoption, which no signal announces (a process's parent dying
// sends its new parent nothing).
func Adoptions(ctx context.Context, pid int, every time.Duration) <-chan struct{} {
	out := make(chan struct{}, 1)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		seen := platform.Children(pid)
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			now := platform.Children(pid)
			for c := range now {
				if !seen[c] {
					select {
					case out <- struct{}{}:
					default:
					}
					break
				}
			}
			seen = now
		}
	}()
	return out
}
