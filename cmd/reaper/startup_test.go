package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// initBudget is what reaper's own packages may allocate before main, in
// bytes: package-level work that every start pays — `reaper version` as
// much as a scan — whether the run uses it or not. Regular expressions,
// the clients' marks and tables are made on first use (sync.OnceValue,
// scan.Pattern); what is left is small maps and lists. It was 570 KB
// when every pattern was compiled at init.
const initBudget = 32 << 10

// The package initialisation of reaper's own packages stays within its
// budget, measured as the runtime reports it (GODEBUG=inittrace=1: each
// package's init, the bytes it allocated). Allocations, not time: they
// are the same on a loaded machine. The control: the trace is read at
// all — the runtime's own packages are in it, and reaper's.
func TestPackageInitBudget(t *testing.T) {
	t.Parallel() // the binary alone
	r := clitest.RunReaper(t, []string{"GODEBUG=inittrace=1"}, "version")
	if r.Code != 0 {
		t.Fatalf("reaper version: exit %d\n%s", r.Code, r.Stderr)
	}
	own := map[string]int{}
	total, lines := 0, 0
	for _, line := range strings.Split(r.Stderr, "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		lines++
		b, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("an inittrace line with no byte count: %q", line)
		}
		if strings.HasPrefix(f[1], "github.com/orphanreaper/reaper") {
			own[f[1]] += b
			total += b
		}
	}
	if lines < 20 || len(own) < 5 {
		t.Fatalf("the init trace: %d lines, %d of reaper's packages: not read\n%s", lines, len(own), r.Stderr)
	}
	if total > initBudget {
		var pkgs []string
		for p := range own {
			pkgs = append(pkgs, p)
		}
		sort.Slice(pkgs, func(i, j int) bool { return own[pkgs[i]] > own[pkgs[j]] })
		var each []string
		for _, p := range pkgs[:min(len(pkgs), 8)] {
			each = append(each, fmt.Sprintf("%s %d", strings.TrimPrefix(p, "github.com/orphanreaper/reaper/"), own[p]))
		}
		t.Errorf("reaper's packages allocate %d bytes before main, over the budget of %d: make what a run may not use on first use (sync.OnceValue)\nthe most: %s", total, initBudget, strings.Join(each, ", "))
	}
}
