package host

import "sync"

// own are the children this process starts for itself (a reader child)
// while RunInit reaps the others it has: RunInit leaves their exits to
// their own waiters. The lock is held while one starts and while RunInit
// reaps, so that no exit is taken between a child's start and its entry
// here.
var own struct {
	sync.Mutex
	pids map[int]bool
	// kick, while RunInit runs, is told that an own child was waited
	// for: an exited own child may have hidden others' exits from it.
	kick chan struct{}
}

// StartOwn starts a child of this process's own with start, which returns
// its pid: an init reaping beside it (RunInit) never takes its exit. Its
// waiter calls OwnDone once it has waited for it.
func StartOwn(start func() (pid int, err error)) (int, error) {
	own.Lock()
	defer own.Unlock()
	pid, err := start()
	if err == nil && pid > 0 {
		if own.pids == nil {
			own.pids = map[int]bool{}
		}
		own.pids[pid] = true
	}
	return pid, err
}

// OwnDone says the own child at pid was waited for.
func OwnDone(pid int) {
	own.Lock()
	delete(own.pids, pid)
	kick := own.kick
	own.Unlock()
	if kick != nil {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
}

// Own reports whether pid is a child this process started for itself
// and has not yet waited for.
func Own(pid int) bool {
	own.Lock()
	defer own.Unlock()
	return own.pids[pid]
}
