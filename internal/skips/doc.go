// Package skips says once, at the end of each package's test binary,
// which tests were skipped and why, grouped by reason: a run as an
// ordinary user leaves out the root-only tests, and this says so in a few
// lines instead of one line per test. go test shows a passing package's
// output with -v (or when it fails); scripts/test-elsewhere.sh shows it.
package skips
