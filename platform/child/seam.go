package child

import (
	"context"
)

// The seam: what each operating system implements, declared once here
// with its doc, in lowercase in the files named for the OS.

// LimitSelf sets the calling process's limits, soft = hard, so that no
// later code can raise them: RLIMIT_DATA (Linux ≥ 4.7 counts private
// writable mappings, getrlimit(2); RLIMIT_AS is unusable for Go, whose
// runtime reserves address space at start), RLIMIT_CPU (soft = hard: Go
// ignores SIGXCPU, so only the hard limit's SIGKILL acts), RLIMIT_NOFILE
// (set here, in the child: Go raises the soft limit at start and restores
// it in children), RLIMIT_FSIZE 0 (it writes no file) and RLIMIT_CORE 0;
// then it makes itself non-dumpable where it can. Lowering needs no
// privilege.
func LimitSelf(l Limits) error { return limitSelf(l) }

// RunChild runs the child, waits for it within ctx, and returns its stdout.
// The child dies with the parent (Linux: PR_SET_PDEATHSIG, which fires when
// the thread that forked it exits, go.dev/issue/27505 — so the fork happens
// on a locked thread that stays until the child is reaped; macOS: it stays
// in the parent's process group, which launchd kills with the job). At
// ctx's end, or past MaxOut, it is killed with SIGKILL. An error says how
// it ended, with the start of its stderr.
func RunChild(ctx context.Context, spec ChildSpec) ([]byte, error) { return runChildOS(ctx, spec) }

// Available reports whether this OS runs reader children (Linux, macOS):
// elsewhere (Windows) a user's state can be read only in reaper's own
// process, so only its own user's is.
func Available() bool { return available() }
