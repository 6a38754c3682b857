//go:build !linux

package run

import (
	"context"

	"github.com/orphanreaper/reaper/audit"
)

// start: fork storms are seen on Linux only (its fork events, or its
// last pid sampled); here none is said.
func (w *stormWatch) start(context.Context) {
	w.streak, w.now = map[stormKey]int{}, map[stormKey]*audit.Storm{}
	w.forked = make(chan struct{})
	close(w.forked)
}
