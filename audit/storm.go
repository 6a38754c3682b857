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
	// Adopter, where PID is 0 and UID a user's, is the init (PID 1, a
	// subreaper) the user's new processes were found under: it did not
	// fork them, and their parent, gone as it forked, is not known.
	Adopter int `json:"adopter,omitempty"`
	// Seen is how: "fork events" (the kernel's proc connector: every fork
	// with its parent), or "sampled" (the children still alive a second
	// after they started: a lower bound).
	Seen string `json:"seen"`
}

// Line is the storm in words, for a log line and a notification.
func (s Storm) Line() string {
	who := s.User
	if who == "" {
		who = fmt.Sprintf("uid %d", s.UID)
	}
	switch {
	case s.PID == 0 && s.UID >= 0 && s.Adopter > 0:
		return fmt.Sprintf("fork storm: %s's processes, adopted by pid %d, start at least %d a second, for %s now (storm_rate %d): parent unknown, each exits as it forks",
			Term(who, MaxName), s.Adopter, s.Rate, s.For.Round(time.Second), s.Threshold)
	case s.PID == 0 && s.UID >= 0:
		return fmt.Sprintf("fork storm: %s starts %d processes a second, for %s now (storm_rate %d): from many parents, or a chain of short-lived ones, none over the rate alone",
			Term(who, MaxName), s.Rate, s.For.Round(time.Second), s.Threshold)
	}
	if s.PID == 0 {
		return fmt.Sprintf("fork storm: this PID namespace starts %d processes a second, for %s now (storm_rate %d); which parent, only fork events say (a watch on the host: root's, or any user's from Linux 6.6)",
			s.Rate, s.For.Round(time.Second), s.Threshold)
	}
	at := ""
	if s.Seen == "sampled" {
		at = "at least "
	}
	return fmt.Sprintf("fork storm: pid %d (%s) of %s starts %s%d processes a second, for %s now (storm_rate %d): %s",
		s.PID, Term(s.Comm, MaxName), Term(who, MaxName), at, s.Rate, s.For.Round(time.Second), s.Threshold, Term(s.Command, 120))
}
