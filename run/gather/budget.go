package gather

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// What one run spends on reading users' state is bounded, and so is each
// user's share of it, so that what one user controls costs root at most a
// fixed budget — that user's doubt, never everyone's veto. Readers are
// scheduled in turns, one uid of each user before the second of any; a
// user's subordinate uids (/etc/subuid: the ranges newuidmap(1) lets that
// user map, filled by default by useradd on Debian, Ubuntu and Fedora)
// are that user's, so one user with 1,200 mapped ids gets readers for
// maxUIDsPerUser of them, not 1,200 (which once took every root run to its
// deadline, signalling nothing for anyone). A uid that gets no reader, or
// whose reader runs out of time, is doubt for that uid alone.
const (
	// maxUIDsPerUser bounds the uids one user (an account and its
	// subordinate ids) gets readers for in a run.
	maxUIDsPerUser = 4
	// maxSubUID bounds /etc/subuid, root's file.
	maxSubUID = 1 << 20
)

// maxReadTime bounds the time the run's readers may take, from the first:
// no reader starts after it, and none runs past it. A third of the time
// left to the run's deadline, when that is less. (A variable for tests.)
var maxReadTime = 10 * time.Second

// readBudget is one run's budget for its reader children, shared by the
// reads of the homes and those of the dirs processes name.
type readBudget struct {
	// user is whose uid is: the uid itself, or the account whose
	// subordinate range holds it.
	user func(uid uint32) uint32
	end  time.Time // no reader runs past it

	mu       sync.Mutex
	uids     map[uint32][]uint32  // user → the uids given readers, in order
	deadline map[uint32]time.Time // uid → its reader's deadline, from its first child
}

// newBudget is the budget of a run that starts reading now: until
// maxReadTime from now, or a third of what is left to ctx's deadline.
func newBudget(ctx context.Context, accts []account) *readBudget {
	now := time.Now()
	end := now.Add(maxReadTime)
	if d, ok := ctx.Deadline(); ok {
		if third := now.Add(d.Sub(now) / 3); third.Before(end) {
			end = third
		}
	}
	return &readBudget{user: subordinates(accts, "/etc/subuid"), end: end,
		uids: map[uint32][]uint32{}, deadline: map[uint32]time.Time{}}
}

// order puts groups in turns: the first uid of each user, in the order
// they come, then the second of each, and so on.
func (b *readBudget) order(groups []*group) []*group {
	turn := map[uint32]int{}
	rank := make(map[*group]int, len(groups))
	for _, g := range groups {
		u := b.user(g.uid)
		rank[g] = turn[u]
		turn[u]++
	}
	out := slices.Clone(groups)
	slices.SortStableFunc(out, func(x, y *group) int { return rank[x] - rank[y] })
	return out
}

// unreadError is why a uid's reader did not run, or ran out of its time,
// within the run's budget: that uid's doubt. The report says it once per
// user (Set.Messages), however many of the user's ids it holds back.
type unreadError struct {
	user uint32 // whose budget it was
	msg  string
	// spent: the run's time for reading ran out before this uid's turn
	// (a loaded host, many users): said once for every user it held back.
	spent bool
}

func (e *unreadError) Error() string { return e.msg }

// admit says whether uid gets a reader (taking a place in its user's
// share), and if not, why not: the doubt of that uid.
func (b *readBudget) admit(uid uint32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u := b.user(uid)
	if slices.Contains(b.uids[u], uid) {
		return nil
	}
	if len(b.uids[u]) >= maxUIDsPerUser {
		if u == uid {
			return &unreadError{user: u, msg: fmt.Sprintf("not read: uid %d's subordinate ids (/etc/subuid) took its share of readers (%d uids a run)", uid, maxUIDsPerUser)}
		}
		return &unreadError{user: u, msg: fmt.Sprintf("not read: uid %d is a subordinate id of uid %d (/etc/subuid), whose share of readers (%d uids a run) is taken", uid, u, maxUIDsPerUser)}
	}
	b.uids[u] = append(b.uids[u], uid)
	return nil
}

// start returns the deadline of a reader of uid starting now: its uid's
// deadline, set by its first reader of the run (ChildDeadline from then),
// and never past the run's reading budget. It fails when that has passed.
func (b *readBudget) start(uid uint32) (time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	d, ok := b.deadline[uid]
	if !ok {
		d = now.Add(ChildDeadline)
		b.deadline[uid] = d
	}
	switch {
	case !now.Before(b.end):
		return d, &unreadError{user: b.user(uid), msg: "not read: the run's time for reading users' state was spent", spent: true}
	case !now.Before(d):
		return d, &unreadError{user: b.user(uid), msg: fmt.Sprintf("not read: uid %d's readers already took %s this run", uid, ChildDeadline)}
	}
	if b.end.Before(d) {
		d = b.end
	}
	return d, nil
}

// subordinates returns who a uid is: the account whose subordinate range
// in path (subuid(5): NAME-or-UID:FIRST:COUNT, one range a line) holds it,
// else the uid itself. The file is root's; one of any other owner is not
// read (a user's word about whose ids are whose is no word here).
func subordinates(accts []account, path string) func(uint32) uint32 {
	self := func(uid uint32) uint32 { return uid }
	b, owner, err := platform.ReadFileOwner(path, maxSubUID)
	if err != nil || owner != 0 {
		return self
	}
	type span struct{ first, end uint64 } // [first, end)
	byName := map[string]uint32{}
	for _, a := range accts {
		if a.Name != "" {
			byName[a.Name] = a.UID
		}
	}
	var spans []span
	var users []uint32
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(f) != 3 || f[0] == "" {
			continue
		}
		first, err1 := strconv.ParseUint(f[1], 10, 32)
		count, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil || count == 0 {
			continue
		}
		user, ok := byName[f[0]]
		if !ok {
			n, err := strconv.ParseUint(f[0], 10, 32)
			if err != nil {
				continue // a name this host has no account for
			}
			user = uint32(n)
		}
		spans = append(spans, span{first, first + count})
		users = append(users, user)
	}
	if len(spans) == 0 {
		return self
	}
	return func(uid uint32) uint32 {
		for i, s := range spans {
			if uint64(uid) >= s.first && uint64(uid) < s.end {
				return users[i]
			}
		}
		return uid
	}
}
