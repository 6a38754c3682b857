package watch

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/run/gather"

	"github.com/orphanreaper/reaper/internal/runtest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/paths"
	pwatch "github.com/orphanreaper/reaper/platform/watch"
)

// A user's exits trigger at most three passes in 30 s, and all users'
// together at most one every 2 s: however many processes titled like a
// client a user starts and ends, the watch passes no more often than
// that (the backstop covers the rest). Root's exits are not counted (the
// control).
func TestHintBudget(t *testing.T) {
	var b hintBudget
	t0 := time.Unix(1000, 0)
	allowed := 0
	for i := 0; i < 100; i++ { // one user's exit every 100 ms for 10 s
		if _, ok := b.allow(1001, t0.Add(time.Duration(i)*100*time.Millisecond)); ok {
			allowed++
		}
	}
	if allowed != 3 {
		t.Errorf("one user, 100 exits in 10 s: %d passes, want 3", allowed)
	}
	if _, ok := b.allow(1001, t0.Add(31*time.Second)); !ok {
		t.Error("the user's budget did not come back after 30 s")
	}
	turns := map[time.Time]bool{}
	for u := uint32(2000); u < 2100; u++ { // 100 users (a subordinate range), one exit each, all at once
		at, ok := b.allow(u, t0.Add(40*time.Second))
		if !ok {
			t.Errorf("uid %d's first exit dropped: want it held or passed", u)
		}
		turns[at] = true
	}
	if len(turns) != 1 {
		t.Errorf("100 users at once: %d passes, want 1 (one every 2 s for all users)", len(turns))
	}
	for i := 0; i < 10; i++ {
		if at, ok := b.allow(0, t0.Add(40*time.Second)); !ok || !at.Equal(t0.Add(40*time.Second)) {
			t.Fatal("control: root's exits were counted against a budget")
		}
	}
}

// Another user's hint never drops B's: A's client dies, B's 1.2 s later —
// B's exit is held until the global pace's next turn (2 s after A's
// pass), never dropped; and a third user's exit in the meantime joins
// that held pass. The control: B past B's own budget is dropped.
func TestHintHeldNotDropped(t *testing.T) {
	var b hintBudget
	t0 := time.Unix(1000, 0)
	if at, ok := b.allow(1001, t0); !ok || !at.Equal(t0) {
		t.Fatalf("A's exit: %v %v, want a pass at once", at, ok)
	}
	at, ok := b.allow(1002, t0.Add(1200*time.Millisecond))
	if !ok || !at.Equal(t0.Add(userGap)) {
		t.Errorf("B's exit 1.2 s after A's: %v %v, want held until %v", at, ok, t0.Add(userGap))
	}
	if at3, ok := b.allow(1003, t0.Add(1500*time.Millisecond)); !ok || !at3.Equal(at) {
		t.Errorf("C's exit while B's pass is held: %v %v, want it to join B's at %v", at3, ok, at)
	}
	for i := range perUID {
		b.allow(1002, t0.Add(time.Duration(10+i*3)*time.Second))
	}
	if _, ok := b.allow(1002, t0.Add(25*time.Second)); ok {
		t.Error("control: B past B's own budget was not dropped")
	}
}

// While every owner named is watched, the backstop is the longest wait;
// while some cannot be — no pidfds at all, or a watch that failed — the
// shorter poll is, since no hint will come for them. The control: a
// watch with all its owners watched waits the backstop.
func TestBackstopPollsWhatItCannotWatch(t *testing.T) {
	cfg := WatchConfig{Backstop: time.Minute, Poll: 10 * time.Second}
	exits, err := pwatch.New()
	if err != nil {
		skips.Skip(t, "no watching of exits here (pidfd_open or epoll refused): "+err.Error())
	}
	defer exits.Close()
	for _, tt := range []struct {
		name      string
		exits     *pwatch.Exits
		unwatched int
		want      time.Duration
	}{
		{"all watched (the control)", exits, 0, time.Minute},
		{"one owner not watched", exits, 1, 10 * time.Second},
		{"no pidfds", nil, 0, 10 * time.Second},
	} {
		w := &watcher{cfg: cfg, exits: tt.exits}
		w.metrics.Unwatched = tt.unwatched
		if got := w.backstop(); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
	short := &watcher{cfg: WatchConfig{Backstop: 2 * time.Second, Poll: 10 * time.Second}}
	if got := short.backstop(); got != 2*time.Second {
		t.Errorf("a backstop under the poll: %s, want it kept", got)
	}
}

// One user's owners past their share are not watched, and do not crowd
// out root's or another user's: a user with 1,000 processes titled like a
// client gets 256 pidfds, root and a second user all of theirs, and the
// rest is counted as not watched. The control: a set within the share is
// kept whole.
func TestCapOwners(t *testing.T) {
	var targets []pwatch.Target
	for i := range 1000 {
		targets = append(targets, pwatch.Target{PID: 10000 + i, UID: 1001})
	}
	targets = append(targets, pwatch.Target{PID: 5, UID: 1002}, pwatch.Target{PID: 6, UID: 0})
	got, left := capOwners(targets)
	byUID := map[uint32]int{}
	for _, tg := range got {
		byUID[tg.UID]++
	}
	if byUID[1001] != perUIDOwners || byUID[1002] != 1 || byUID[0] != 1 || got[0].UID != 0 || left != 1000-perUIDOwners {
		t.Errorf("watched %v (root's first: %v), %d left out; want %d of uid 1001's, 1 each of 1002's and root's, %d left out",
			byUID, got[0].UID == 0, left, perUIDOwners, 1000-perUIDOwners)
	}
	few := targets[:10]
	if got, left := capOwners(few); len(got) != 10 || left != 0 {
		t.Errorf("control: %d of 10 watched, %d left out", len(got), left)
	}
}

// A failed pass's STATUS= line to the service manager cannot carry a
// second assignment: sd_notify reads a newline as the start of one
// (MAINPID=… would name another main process). The error here quotes a
// lock path with a newline in it. The control: the line still says why.
func TestFailedPassStatusIsOneLine(t *testing.T) {
	var sent []string
	w := &watcher{
		cfg: WatchConfig{ReapConfig: run.ReapConfig{
			Config:   run.Config{Policy: &policy.Policy{}, Timeout: time.Second},
			LockFile: "/dev/null/x\nMAINPID=1/reaper.lock", // under a file: cannot be made
		}},
		log:     slog.New(slog.DiscardHandler),
		notify:  func(s string) { sent = append(sent, s) },
		state:   gather.NewCache(),
		metrics: audit.WatchMetrics{Passes: map[string]uint64{}},
	}
	w.pass(context.Background())
	if len(sent) != 1 || strings.Contains(sent[0], "\n") || !strings.Contains(sent[0], "failed") {
		t.Errorf("sent %q: want one STATUS= line saying the pass failed, no newline in it", sent)
	}
}

// A watch that starts while another watch holds its scope's watch lock
// says so at once, naming the lock: two watches of one scope would each
// wait on the other's passes. The control: with the lock free, no such
// word.
func TestWatchSaysLockHeld(t *testing.T) {
	for _, held := range []bool{false, true} {
		lock := filepath.Join(t.TempDir(), "reaper.lock")
		if held {
			f, err := platform.OpenOwn(paths.BesideLock(lock).Watch, platform.OwnLock)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if ok, err := platform.TryLock(f); !ok {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // no pass: the start's check alone
		cfg := WatchConfig{ReapConfig: run.ReapConfig{Config: run.Config{Policy: runtest.Policy(t, client.NewSet()), Clients: client.NewSet(), ProcRoot: runtest.Fixture(), Timeout: time.Minute}, LockFile: lock}, Log: slog.New(slog.NewTextHandler(&out, nil))}
		cfg.ProcRoot = ""
		Watch(ctx, cfg, nil)
		if said := strings.Contains(out.String(), "watches this scope already") && strings.Contains(out.String(), lock); said != held {
			t.Errorf("lock held %v: the watch said %q", held, out.String())
		}
	}
}

// A pass whose users' state could not be read is tried again within
// seconds — 2 s, then twice as long while the doubt stays, never past the
// backstop — with those users' state read afresh; a pass with no doubt
// ends the retries. The control: with no doubt there is no retry.
func TestRetryAfterDoubt(t *testing.T) {
	w := &watcher{cfg: WatchConfig{Backstop: 10 * time.Second}, state: gather.NewCache(), log: slog.New(slog.DiscardHandler)}
	w.doubted(nil)
	if w.retryIn != 0 {
		t.Fatalf("control: no doubt, a retry in %s", w.retryIn)
	}
	var got []time.Duration
	for range 5 {
		w.doubted([]policy.Doubt{{UID: 1002, Reason: "not read within its time"}})
		got = append(got, w.retryIn)
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("retries %v, want %v", got, want)
	}
	w.doubted(nil)
	if w.retryIn != 0 {
		t.Errorf("a pass without doubt left a retry in %s", w.retryIn)
	}
}
