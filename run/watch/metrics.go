package watch

import (
	"fmt"

	"github.com/orphanreaper/reaper/audit"
)

// publish gives Publish the last pass's metrics, with the storms now.
func (w *watcher) publish() {
	if w.cfg.Publish == nil {
		return
	}
	w.last.Lock()
	defer w.last.Unlock()
	if w.last.report == nil {
		return
	}
	m := w.last.metrics
	m.Storms, m.StormsSaid, m.StormsSeen = w.storms.storms()
	w.cfg.Publish(audit.MetricsText(w.last.report, w.last.signals, w.last.took, &m, m.Heartbeat), m.Heartbeat)
}

// sayHeadroom logs each user who came past audit.HeadroomWarnAt since
// the last pass (once, not on every pass while they stay there).
func (w *watcher) sayHeadroom(hs []audit.Headroom) {
	full := map[int64]bool{}
	for _, h := range hs {
		if !h.Warn {
			continue
		}
		full[h.UID] = true
		if !w.full[h.UID] {
			w.log.Warn(h.Warning(), "uid", h.UID, "percent", h.Percent)
		}
	}
	w.full = full
}

// storm says a fork storm as it starts or ends: a log line (the journal's
// under a service manager), the status, and the desktop's notification.
func (w *watcher) storm(s audit.Storm, over bool) {
	if over {
		w.log.Info(fmt.Sprintf("fork storm over: pid %d (%s)", s.PID, audit.Printable(s.Comm)), "pid", s.PID, "lasted", s.For)
	} else {
		w.log.Warn(s.Line(), "pid", s.PID, "uid", s.UID, "rate", s.Rate, "storm_rate", s.Threshold, "seen", s.Seen)
		w.notify("STATUS=" + audit.Printable(s.Line()))
	}
	if j := w.cfg.Records.Journal; j == "on" || j == "auto" {
		if _, err := audit.JournalStorm(s, over); err != nil {
			w.log.Warn("the storm's journal record was not sent", "err", err)
		}
	}
	if w.cfg.Desktop != nil && !over {
		if err := w.cfg.Desktop.Storm(s); err != nil {
			w.log.Warn("a notification was not sent", "err", err)
		}
	}
	go w.publish() // after second() lets the storms go
}
