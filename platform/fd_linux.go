package platform

import (
	"fmt"
	"os"
	"strconv"
)

func (s *Snapshot) ptyHolds(p *Process) ([]PTYHold, error) {
	if s.Self == 0 || p.Zombie() || p.KernelThread() {
		return nil, nil // a fixture has no fds to read
	}
	dir := DefaultProcRoot + "/" + strconv.Itoa(p.PID)
	ents, err := os.ReadDir(dir + "/fd")
	if err != nil {
		if isGone(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("pty holds of %d: %w", p.PID, err)
	}
	seen := map[PTYHold]bool{}
	var holds []PTYHold
	for _, e := range ents {
		link, err := os.Readlink(dir + "/fd/" + e.Name())
		if err != nil {
			continue
		}
		var h PTYHold
		switch {
		case link == "/dev/ptmx" || link == "/dev/pts/ptmx":
			b, err := os.ReadFile(dir + "/fdinfo/" + e.Name())
			if err != nil {
				continue
			}
			n, ok := ParseFdinfoTTYIndex(b)
			if !ok {
				continue
			}
			h = PTYHold{PTS: n, Master: true}
		default:
			t := parsePTSLink(link)
			if t.PTS < 0 {
				continue
			}
			h = PTYHold{PTS: t.PTS, HungUp: t.HungUp}
		}
		if !seen[h] {
			seen[h] = true
			holds = append(holds, h)
		}
	}
	return holds, nil
}
