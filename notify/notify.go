package notify

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
)

// Desktop sends one notification.
type Desktop interface {
	Send(summary, body string) error
}

// MinGap is the shortest time between two notifications.
const MinGap = 30 * time.Second

// forgetAfter is how long a tree told of is remembered after a report
// last named it.
const forgetAfter = 24 * time.Hour

// DefaultAbove is the size from which a tree the policy only reports is
// worth a notification (its PSS, else RSS).
const DefaultAbove = 512 << 20

// Notifier decides what a watch's passes are worth telling.
type Notifier struct {
	Desktop Desktop
	// Above is the size of a report-only tree worth telling (0: none).
	Above uint64
	// Now is the clock (tests set it).
	Now func() time.Time

	last time.Time
	// told are the trees told of, by pid and start, with when a report
	// last named them: forgotten a day after, so that a watch running
	// for months keeps a day's trees, not all of them.
	told    map[string]time.Time
	pending []item
}

// item is one tree worth telling.
type item struct {
	group, line string
	bytes       uint64
	ended       bool
}

// Pass reads one pass's report and sends what is due: the trees it
// ended, the report-only trees above the size not told of before, grouped
// by session — or keeps them for later when the last notification was
// less than MinGap ago. It returns how many notifications it sent.
func (n *Notifier) Pass(rep *audit.Report) (int, error) {
	now := time.Now()
	if n.Now != nil {
		now = n.Now()
	}
	if n.told == nil {
		n.told = map[string]time.Time{}
	}
	defer func() {
		for key, at := range n.told {
			if now.Sub(at) > forgetAfter {
				delete(n.told, key)
			}
		}
	}()
	for _, f := range rep.Findings {
		key := fmt.Sprintf("%d@%s", f.RootPID, f.Start)
		if _, ok := n.told[key]; ok {
			n.told[key] = now
			continue
		}
		size := f.RSSBytes
		if f.PSSBytes > 0 {
			size = f.PSSBytes
		}
		switch {
		case f.Outcome == policy.Killed || f.Outcome == policy.Gone && f.Ended != "":
			n.told[key] = now
			n.pending = append(n.pending, item{group(f), line(f, size), size, true})
		case (f.Outcome == policy.Reported || f.Outcome == policy.Deferred && f.Action == "report") && n.Above > 0 && size >= n.Above:
			n.told[key] = now
			n.pending = append(n.pending, item{group(f), line(f, size) + fmt.Sprintf(" — reaper explain %d", f.RootPID), size, false})
		}
	}
	if len(n.pending) == 0 || !n.last.IsZero() && now.Sub(n.last) < MinGap {
		return 0, nil
	}
	summary, body := message(n.pending)
	n.pending, n.last = nil, now
	return 1, n.Desktop.Send(summary, body)
}

// Pending reports whether something waits for the gap to pass.
func (n *Notifier) Pending() bool { return len(n.pending) > 0 }

// group is the session a finding is of, in words: its owner and run, or
// its kind where nothing names an owner.
func group(f audit.Finding) string {
	switch {
	case f.Owner != "" && f.RunID != "":
		return f.Owner + " " + f.RunID
	case f.Owner != "" && f.OwnerPID > 0:
		return fmt.Sprintf("%s pid %d", f.Owner, f.OwnerPID)
	case f.Owner != "":
		return f.Owner
	}
	return "no owner known"
}

func line(f audit.Finding, size uint64) string {
	cmd := audit.UserText(f.Cmdline, 4*60)
	if r := []rune(cmd); len(r) > 60 {
		cmd = string(r[:59]) + "…"
	}
	who := f.User
	if who == "" {
		who = fmt.Sprintf("uid %d", f.UID)
	}
	return fmt.Sprintf("%s %d (%s), %s's, %s", f.Kind, f.RootPID, audit.Printable(cmd), audit.Term(who, audit.MaxName), audit.HumanBytes(size))
}

// message is one notification for items: its summary counts what was
// ended and what only found, with the memory; its body is a line per
// tree under a line per session.
func message(items []item) (string, string) {
	var ended, found int
	var endedBytes, foundBytes uint64
	by := map[string][]string{}
	var groups []string
	for _, it := range items {
		if it.ended {
			ended++
			endedBytes += it.bytes
		} else {
			found++
			foundBytes += it.bytes
		}
		if _, ok := by[it.group]; !ok {
			groups = append(groups, it.group)
		}
		by[it.group] = append(by[it.group], it.line)
	}
	sort.Strings(groups)
	var parts []string
	if ended > 0 {
		parts = append(parts, fmt.Sprintf("ended %s (%s)", audit.Plural(ended, "leftover tree"), audit.HumanBytes(endedBytes)))
	}
	if found > 0 {
		parts = append(parts, fmt.Sprintf("found %s it only reports (%s)", audit.Plural(found, "large tree"), audit.HumanBytes(foundBytes)))
	}
	var body strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&body, "%s:\n", audit.Term(g, audit.MaxName))
		for _, l := range by[g] {
			fmt.Fprintf(&body, "  %s\n", l)
		}
	}
	return "reaper " + strings.Join(parts, "; "), strings.TrimRight(body.String(), "\n")
}

// Storm tells of a fork storm as it starts: at once, whatever the gap
// since the last notification (a machine about to run out of processes
// does not wait). Its end is not told: the log says it.
func (n *Notifier) Storm(s audit.Storm) error {
	return n.Desktop.Send("reaper: fork storm", audit.Term(s.Line(), 1<<10))
}

// New is --notify's notifier: the desktop's (Open), told of report-only
// trees from above on; nil where there is no desktop, said once on log.
func New(getenv func(string) string, above uint64, log *slog.Logger) *Notifier {
	desktop, why := Open(getenv)
	if desktop == nil {
		if log != nil {
			log.Info(why)
		}
		return nil
	}
	return &Notifier{Desktop: desktop, Above: above}
}
