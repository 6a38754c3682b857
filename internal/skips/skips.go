package skips

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

var (
	mu    sync.Mutex
	byWhy = map[string][]string{} // reason → the tests skipped for it
)

// Skip records why t is skipped, for Main's summary, and skips it.
func Skip(t testing.TB, why string) {
	t.Helper()
	mu.Lock()
	byWhy[why] = append(byWhy[why], t.Name())
	mu.Unlock()
	t.Skip(why)
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}

// Main runs the package's tests, then writes the summary of what was
// skipped to stderr, and returns the exit status for os.Exit.
func Main(m *testing.M) int {
	code := m.Run()
	Summary(os.Stderr)
	return code
}

// Summary writes what was skipped, grouped by reason, if anything was.
func Summary(w io.Writer) {
	mu.Lock()
	defer mu.Unlock()
	if len(byWhy) == 0 {
		return
	}
	whys, counts := make([]string, 0, len(byWhy)), 0
	for why, names := range byWhy {
		whys = append(whys, why)
		counts += len(names)
	}
	sort.Slice(whys, func(i, j int) bool {
		return len(byWhy[whys[i]]) > len(byWhy[whys[j]]) || len(byWhy[whys[i]]) == len(byWhy[whys[j]]) && whys[i] < whys[j]
	})
	noun := "tests"
	if counts == 1 {
		noun = "test"
	}
	fmt.Fprintf(w, "skipped %d %s (go test -v names each):\n", counts, noun)
	for _, why := range whys {
		names := byWhy[why]
		shown := names
		if len(shown) > 4 {
			shown = shown[:4]
		}
		more := ""
		if len(names) > len(shown) {
			more = fmt.Sprintf(", and %d more", len(names)-len(shown))
		}
		fmt.Fprintf(w, "  %d: %s (%s%s)\n", len(names), why, strings.Join(shown, ", "), more)
	}
}
