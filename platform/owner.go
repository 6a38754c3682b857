package platform

import "sync"

// ownerReader reads who owns a process's /proc entry (Linux's procReader).
type ownerReader interface {
	owner(pid int) (uint32, error)
}

// Owner returns who owns p as far as counting goes: the owner of its
// /proc entry, read on first use with one statx — its effective uid, also
// for a task that is not dumpable or a zombie (task_dump_owner makes only
// the files inside root's, proc(5)) — or the real uid when
// Snapshot.UID has read it already. It says whose process to count p as
// (a user's headroom) and whose state could speak for something in the
// table; a decision about whose process it is reads Snapshot.UID. Where
// the table gives the owner (macOS, a fixture) it is that. NoUID when the
// process could not be read: nobody's.
func (s *Snapshot) Owner(p *Process) uint32 {
	if !s.lazyOwners || p.loaded&(detailOwner|detailStatus) != 0 || p.KernelThread() {
		return p.UID
	}
	if s.frozen {
		s.miss(p, detailOwner)
		return NoUID
	}
	p.loaded |= detailOwner
	s.reads++
	p.UID = readOwner(s.reader, p.PID)
	return p.UID
}

// readOwner is the owner of pid's /proc entry, NoUID if it could not be
// read (gone since the stat pass, or no reader).
func readOwner(r detailReader, pid int) uint32 {
	or, ok := r.(ownerReader)
	if !ok {
		return NoUID
	}
	uid, err := or.owner(pid)
	if err != nil {
		return NoUID
	}
	return uid
}

// Owners reads the owner of every process not read yet, on as many
// goroutines as the stat pass: for the views that count every process by
// user (ps, top, headroom). Nothing else may use the snapshot meanwhile.
func (s *Snapshot) Owners() {
	if !s.lazyOwners {
		return
	}
	if s.frozen || s.reader == nil {
		for i := range s.Procs {
			s.Owner(&s.Procs[i])
		}
		return
	}
	todo := make([]int32, 0, len(s.Procs))
	for i := range s.Procs {
		if p := &s.Procs[i]; p.loaded&(detailOwner|detailStatus) == 0 && !p.KernelThread() {
			todo = append(todo, int32(i))
		}
	}
	workers := statGoroutines(len(todo))
	chunk := (len(todo) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		part := todo[min(w*chunk, len(todo)):min((w+1)*chunk, len(todo))]
		r := s.reader
		if w > 0 {
			r = r.fork()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range part {
				p := &s.Procs[i]
				p.UID = readOwner(r, p.PID)
				p.loaded |= detailOwner
			}
		}()
	}
	wg.Wait()
	s.reads += len(todo)
}

// OwnsAny reports whether uid owns a process in the table (by Owner). It
// reads owners only until it meets uid: over every question asked of one
// snapshot, each process's owner is read at most once.
func (s *Snapshot) OwnsAny(uid uint32) bool {
	if s.owning == nil {
		s.owning = map[uint32]bool{}
	}
	for !s.owning[uid] && s.ownersAt < len(s.Procs) {
		s.owning[s.Owner(&s.Procs[s.ownersAt])] = true
		s.ownersAt++
	}
	return s.owning[uid]
}
