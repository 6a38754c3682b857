package platform

import "sync"

// PSSOf reads the PSS of each of procs (Snapshot.PSS) on prefetchWorkers
// goroutines, as Prefetch reads details: the work is the kernel's walk of
// each address space, and runs on separate cores. A process whose PSS
// could not be read (another user's, as an ordinary user; gone; a
// fixture's) is not in the map.
func (s *Snapshot) PSSOf(procs []*Process) map[int]uint64 {
	out := make(map[int]uint64, len(procs))
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan *Process)
	for range prefetchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range next {
				if pss, err := s.PSS(p); err == nil {
					mu.Lock()
					out[p.PID] = pss
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range procs {
		next <- p
	}
	close(next)
	wg.Wait()
	return out
}
