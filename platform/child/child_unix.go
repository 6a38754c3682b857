//go:build linux || darwin

package child

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/orphanreaper/reaper/platform/host"
)

// A root reaper never parses what a user wrote: it runs a child of its own
// binary as that user (setgroups, setgid, setuid before exec: the kernel
// clears every capability when the uids leave 0, capabilities(7)), which
// reads the user's files with the user's rights, bounds itself with
// resource limits before it reads a byte (LimitSelf), and prints what it
// read. The parent gives it a wall deadline, reads at most a cap of its
// output, and kills it at either bound. OpenSSH's privilege-separated
// child and systemd-coredump's drop to the crashing user are the models.

// ChildSpec is a child of reaper's own binary.
type ChildSpec struct {
	Args []string // after the program name
	Env  []string // the whole environment: nothing of the parent's leaks in
	// Drop runs the child as UID:GID with no supplementary groups; without
	// it the child runs as the caller.
	Drop     bool
	UID, GID uint32
	// MaxOut and MaxErr bound what is read of stdout and stderr: past
	// MaxOut the child is killed and RunChild fails; stderr is cut.
	MaxOut, MaxErr int
	// Buf, when set, is where stdout is read: RunChild returns it grown
	// to fit, to be used again for the next child (and the output is valid
	// until then).
	Buf []byte
}

// ErrChildOutput: the child printed more than its cap.
var ErrChildOutput = errors.New("printed more than its output cap")

func available() bool { return true }

func runChildOS(ctx context.Context, spec ChildSpec) ([]byte, error) {
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, after the child
		out, err := runChild(ctx, spec)
		done <- result{out, err}
	}()
	r := <-done
	return r.out, r.err
}

func runChild(ctx context.Context, spec ChildSpec) ([]byte, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return nil, err
	}
	defer errR.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		outW.Close()
		errW.Close()
		return nil, err
	}
	sys := childSys()
	if spec.Drop {
		sys.Credential = &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: []uint32{}}
	}
	// Started as this process's own: an init reaping its adopted children
	// beside it (reaper run's) leaves the child's exit to proc.Wait.
	var proc *os.Process
	_, err = host.StartOwn(func() (int, error) {
		p, err := os.StartProcess(exe, append([]string{"reaper"}, spec.Args...), &os.ProcAttr{
			Dir: "/", Env: spec.Env, Files: []*os.File{null, outW, errW}, Sys: sys,
		})
		if err != nil {
			return 0, err
		}
		proc = p
		return p.Pid, nil
	})
	null.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		return nil, fmt.Errorf("start a reader: %w", err)
	}
	var stderr bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(&stderr, io.LimitReader(errR, int64(spec.MaxErr)))
		io.Copy(io.Discard, errR)
	}()
	// Kill at the deadline, and close the pipes' read ends: a process of
	// the child's user that got hold of a write end (through
	// /proc/PID/fd before the child made itself non-dumpable) would
	// otherwise keep the reads below waiting after the child is dead.
	stop := context.AfterFunc(ctx, func() {
		proc.Signal(syscall.SIGKILL)
		outR.Close()
		errR.Close()
	})
	out, rerr := readAll(outR, spec.Buf[:0], spec.MaxOut+1)
	over := len(out) > spec.MaxOut
	if over || rerr != nil {
		proc.Signal(syscall.SIGKILL)
	}
	outR.Close() // a child still writing gets EPIPE
	st, werr := proc.Wait()
	host.OwnDone(proc.Pid)
	stop()
	wg.Wait()
	msg := firstLine(stderr.Bytes())
	switch {
	case werr != nil:
		return nil, werr
	case ctx.Err() != nil:
		// Killed at its deadline, or done after it while the kill was
		// still to run (a loaded machine schedules the deadline's
		// goroutine late): either way not read in time, and not used.
		if st.Success() {
			return nil, fmt.Errorf("done after its deadline: %w", context.Cause(ctx))
		}
		return nil, fmt.Errorf("killed at its deadline: %w", context.Cause(ctx))
	case over:
		return nil, fmt.Errorf("%w (%d bytes)", ErrChildOutput, spec.MaxOut)
	case rerr != nil:
		return nil, rerr
	case !st.Success():
		return nil, fmt.Errorf("%s%s", describeExit(st), msg)
	}
	return out, nil
}

// readAll reads r to its end into buf, growing it as needed, up to max
// bytes.
func readAll(r io.Reader, buf []byte, max int) ([]byte, error) {
	for len(buf) < max {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):min(cap(buf), max)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// describeExit says how a child ended: a signal (RLIMIT_CPU's hard limit
// is SIGKILL, Go's fatal out-of-memory is exit 2) or its status.
func describeExit(st *os.ProcessState) string {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", st.ExitCode())
}

// firstLine is ": " and the first line of b, cut, or "".
func firstLine(b []byte) string {
	b, _, _ = bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	if len(b) == 0 {
		return ""
	}
	return ": " + string(b[:min(len(b), 200)])
}

// Limits are what a reader child bounds itself with.
type Limits struct {
	Data   uint64 // bytes of data segment and private mappings (RLIMIT_DATA)
	CPU    uint64 // seconds of CPU; the hard limit is SIGKILL
	Files  uint64 // open descriptors
	Memory int64  // the Go runtime's soft memory limit, below Data
}

func limitSelf(l Limits) error {
	set := []struct {
		name     string
		resource int
		value    uint64
		required bool
	}{
		{"RLIMIT_DATA", unix.RLIMIT_DATA, l.Data, dataLimitRequired},
		{"RLIMIT_CPU", unix.RLIMIT_CPU, l.CPU, true},
		{"RLIMIT_NOFILE", unix.RLIMIT_NOFILE, l.Files, true},
		{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, 0, true},
		{"RLIMIT_CORE", unix.RLIMIT_CORE, 0, true},
	}
	for _, s := range set {
		if err := unix.Setrlimit(s.resource, &unix.Rlimit{Cur: s.value, Max: s.value}); err != nil && s.required {
			return fmt.Errorf("setrlimit %s: %w", s.name, err)
		}
	}
	if l.Memory > 0 {
		setMemoryLimit(l.Memory)
	}
	return notDumpable()
}

// setMemoryLimit makes the Go runtime collect harder as the heap nears
// the limit, so that a large but legitimate read finishes under
// RLIMIT_DATA rather than dying at it.
func setMemoryLimit(n int64) { debug.SetMemoryLimit(n) }
