package audit

import (
	"errors"
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/policy"
)

// ParseWhen reads a point in time as --since and --until take it.
func ParseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	switch strings.ToLower(s) {
	case "":
		return time.Time{}, nil
	case "today":
		return midnight, nil
	case "yesterday":
		return midnight.AddDate(0, 0, -1), nil
	case "now":
		return now, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, errors.New("a duration back from now cannot be negative")
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, now.Location()); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errors.New("want a duration (24h, 7d), a date (2006-01-02), a time (2006-01-02T15:04), yesterday or today")
}

// KnownUser reports whether u is a uid, or a name this host knows.
func KnownUser(u string) bool {
	if _, err := strconv.ParseUint(u, 10, 32); err == nil {
		return true
	}
	_, err := user.Lookup(u)
	return err == nil
}

// Set fills the filter's span from --since and --until as people write
// them (ParseWhen, against now), and checks its outcome; the error names
// the flag at fault.
func (f *HistoryFilter) Set(since, until string, now time.Time) error {
	var err error
	if f.Since, err = ParseWhen(since, now); err != nil {
		return fmt.Errorf("--since %q: %w", since, err)
	}
	if until != "" {
		if f.Until, err = ParseWhen(until, now); err != nil {
			return fmt.Errorf("--until %q: %w", until, err)
		}
	}
	if f.Outcome != "" && !slices.Contains(policy.Outcomes, policy.Outcome(f.Outcome)) {
		return fmt.Errorf("--outcome %q: want %s", f.Outcome, OutcomeList())
	}
	return nil
}

// OutcomeList is every outcome, as help and errors list them.
func OutcomeList() string {
	names := make([]string, len(policy.Outcomes))
	for i, o := range policy.Outcomes {
		names[i] = string(o)
	}
	return strings.Join(names, ", ")
}
