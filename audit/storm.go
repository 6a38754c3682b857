package audit

import (
	"fmt"
	"time"
)

// Storm is a parent starting processes faster than the policy's
// storm_rate, for storm_for or longer: runaway agent process growth that
// exhausts a user's process limit or a kernel (anthropics/claude-code
// #80362: macOS panicked at ~43 spawns a second). A watch says it at
// once; it is never signalled for.
type Storm struct {
	// PID is the parent's (0: the PID namespace's rate alone, where no
	// parent could be named), Comm its kernel name and Command its command line.
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`
	Command string `json:"command"`
	UID     int64  `json:"uid"`
	User    string `json:"user"`
	// Rate is the processes it started in the last second, For how long
	// it has been over Threshold.
	Rate      int           `json:"rate"`
	For       time.Duration `json:"-"`
	Threshold int           `json:"threshold"`
	// Seen is how: "fork events" (the kernel's proc connector: every fork
	// with its parent), or "sampled" (the children still alive a second
	// after they started: a lower bound).
	Seen string `json:"seen"`
}

// Line is the storm in words, for a log line and a notification.
func (s Storm) Line() string {
	if s.PID == 0 {
		return fmt.Sprintf("fork storm: this PID namespace starts %d processes a second, for %s now (storm_rate %d); which parent, only fork events say (a watch on the host: root's, or any user's from Linux 6.6)",
			s.Rate, s.For.Round(time.Second), s.Threshold)
	}
	who := s.User
	if who == "" {
		who = fmt.Sprintf("uid %d", s.UID)
	}
	at := ""
	if s.Seen == "sampled" {
		at = "at least "
	}
	return fmt.Sprintf("fork storm: pid %d (%s) of %s starts %s%d processes a second, for %s now (storm_rate %d): %s",
		s.PID, Printable(s.Comm), Printable(who), at, s.Rate, s.For.Round(time.Second), s.Threshold, clipAt(Printable(s.Command), 120))
}
