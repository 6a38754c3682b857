package view

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/scan"
)

// Top is what `reaper top` asks of the process table, each call a pass
// of its own: the ps view, one process's story, and the reap of one
// finding — its dry-run first, then the act, both through Reap's gates
// (the plan, the re-read of the owners, the signal-time checks), confined
// to the finding's root with Config.Only.
type Top struct {
	Reap run.ReapConfig
	// Timeout bounds each pass (DefaultTimeout of the policy when zero).
	Timeout time.Duration
}

// View is a pass's ps view.
func (l *Top) View(ctx context.Context) (*audit.PSView, error) {
	pass, err := run.Scan(ctx, l.Reap.Config, policy.ModeScan)
	if err != nil {
		return nil, err
	}
	defer pass.Close()
	return PS(pass), nil
}

// Explain is explain PID's table, as a person reads it.
func (l *Top) Explain(ctx context.Context, pid int) (string, error) {
	cfg := l.Reap.Config
	cfg.EveryStdin = true
	pass, err := run.Scan(ctx, cfg, policy.ModeScan)
	if err != nil {
		return "", err
	}
	defer pass.Close()
	e, err := Explain(pass, pid)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := e.WriteTable(&b, audit.Style{}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// Ending is a reap of one finding: what its dry-run planned (Planned:
// the policy would signal it) or what the reap did, as the report says.
type Ending struct {
	Planned bool
	Finding *audit.Finding
	Text    string
}

// End reaps the finding rooted at root — a dry-run when dryRun — and
// nothing else. A root that is no finding of the policy now (a live
// session's process, a tree that became owned) is no error: the Ending
// says so and nothing was signalled.
func (l *Top) End(ctx context.Context, root int, dryRun bool) (*Ending, error) {
	cfg := l.Reap
	cfg.Only = func(f *scan.Finding) bool { return f.Root.PID == root }
	cfg.DryRun = dryRun
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = run.DefaultTimeout(cfg.Policy)
	}
	cfg.Started = time.Now()
	cfg.Deadline = cfg.Started.Add(timeout)
	ctx, cancel := context.WithDeadline(ctx, cfg.Deadline)
	defer cancel()
	done, err := run.Reap(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer done.Close()
	if err := done.Record(cfg, nil); err != nil {
		return nil, err
	}
	out := &Ending{}
	for i := range done.Report.Findings {
		if f := &done.Report.Findings[i]; f.RootPID == root {
			out.Finding = f
		}
	}
	if out.Finding == nil {
		out.Text = fmt.Sprintf("pid %d roots no finding of the policy now: nothing to end (a live session's processes never are)", root)
		return out, nil
	}
	out.Planned = out.Finding.Outcome == policy.Planned
	var b bytes.Buffer
	if err := done.Report.WriteTable(&b, audit.Style{}); err != nil {
		return nil, err
	}
	out.Text = b.String()
	return out, nil
}
