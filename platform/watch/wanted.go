//go:build linux || darwin || windows

package watch

// wanted is targets as a set.
func wanted(targets []Target) map[Target]bool {
	want := make(map[Target]bool, len(targets))
	for _, t := range targets {
		want[t] = true
	}
	return want
}
