package gather

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// subordinates reads root's /etc/subuid: a uid in a range is the range's
// user's (by name or by number); any other uid is its own. A file of
// another owner is not read (the control: the same file, root's, is).
func TestSubordinates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "subuid")
	os.WriteFile(path, []byte("alice:100000:65536\n1002:165536:65536\n# a comment\nnobody-here:300000:10\nbad:x:1\n"), 0o644)
	accts := []account{{UID: 1001, Name: "alice"}}
	who := subordinates(accts, path)
	if os.Geteuid() != 0 {
		t.Skip("the file must be root's to be read; not root")
	}
	for uid, want := range map[uint32]uint32{100000: 1001, 165535: 1001, 165536: 1002, 231071: 1002, 231072: 231072, 300001: 300001, 1001: 1001, 0: 0} {
		if got := who(uid); got != want {
			t.Errorf("uid %d is %d's, want %d's", uid, got, want)
		}
	}
	os.Chown(path, 65534, 65534)
	if got := subordinates(accts, path)(100000); got != 100000 {
		t.Errorf("a subuid file of another owner was read: 100000 is %d's", got)
	}
}

// The budget takes one uid of each user before the second of any, gives
// each user (an account and its subordinate ids) readers for at most
// maxUIDsPerUser uids a run, across both batches, and says why the rest
// are not read: that uid's doubt.
func TestBudgetShares(t *testing.T) {
	b := &readBudget{user: func(uid uint32) uint32 {
		if uid >= 100000 {
			return 1001 // alice's subordinate ids
		}
		return uid
	}, end: time.Now().Add(time.Hour), uids: map[uint32][]uint32{}, deadline: map[uint32]time.Time{}}
	var groups []*group
	for _, uid := range []uint32{1001, 100000, 100001, 100002, 100003, 100004, 1002, 0} {
		groups = append(groups, &group{uid: uid})
	}
	var order []uint32
	for _, g := range b.order(groups) {
		order = append(order, g.uid)
	}
	if want := []uint32{1001, 1002, 0, 100000, 100001, 100002, 100003, 100004}; !reflect.DeepEqual(order, want) {
		t.Errorf("order %v, want %v: every user's first uid first", order, want)
	}
	var admitted []uint32
	for _, uid := range order {
		if err := b.admit(uid); err != nil {
			if !strings.Contains(err.Error(), "subordinate id of uid 1001") {
				t.Errorf("uid %d: %v", uid, err)
			}
		} else {
			admitted = append(admitted, uid)
		}
	}
	if want := []uint32{1001, 1002, 0, 100000, 100001, 100002}; !reflect.DeepEqual(admitted, want) {
		t.Errorf("admitted %v, want %v", admitted, want)
	}
	// A second batch: a uid admitted before is admitted again; the share
	// is still spent for the others.
	if b.admit(100000) != nil || b.admit(100009) == nil || b.admit(1003) != nil {
		t.Errorf("the second batch: the share is not kept across batches")
	}
}

// A uid's readers share one deadline in a run, from its first child: a
// uid read in both batches gets ChildDeadline once, not twice. No reader
// starts once the run's time for reading is spent, and none runs past it.
func TestBudgetDeadlines(t *testing.T) {
	now := time.Now()
	b := &readBudget{user: func(u uint32) uint32 { return u }, end: now.Add(time.Hour), uids: map[uint32][]uint32{}, deadline: map[uint32]time.Time{}}
	first, err := b.start(1001)
	if err != nil || first.Sub(now) < ChildDeadline-time.Second || first.Sub(now) > ChildDeadline+time.Second {
		t.Fatalf("first reader: deadline in %s, %v", first.Sub(now), err)
	}
	if second, err := b.start(1001); err != nil || !second.Equal(first) {
		t.Errorf("second reader of the uid: %s, %v; want the first's deadline", second, err)
	}
	b.deadline[1001] = now.Add(-time.Second)
	if _, err := b.start(1001); err == nil || !strings.Contains(err.Error(), "already took") {
		t.Errorf("a uid whose time is spent: %v", err)
	}
	b.end = now.Add(time.Second)
	if d, err := b.start(1002); err != nil || d.After(b.end) {
		t.Errorf("a reader near the budget's end: %s, %v; want the budget's end", d, err)
	}
	b.end = now.Add(-time.Millisecond)
	if _, err := b.start(1003); err == nil || !strings.Contains(err.Error(), "time for reading users' state was spent") {
		t.Errorf("after the budget: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	if nb := newBudget(ctx, nil); time.Until(nb.end) > 2100*time.Millisecond {
		t.Errorf("a run with 6s left reads for %s, want a third of it", time.Until(nb.end))
	}
}
