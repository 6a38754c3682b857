//go:build race

package child

// raceEnabled: ThreadSanitizer's shadow memory does not fit in the
// RLIMIT_DATA a reader child sets on itself, so TestLimitSelf skips under
// -race (the children of the other tests set no limit).
const raceEnabled = true
