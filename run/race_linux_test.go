//go:build race

package run

// raceEnabled: the race detector's allocator does not fit in a reader
// child's RLIMIT_DATA, so the tests that start children skip under -race.
const raceEnabled = true
