//go:build unix

package gather

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// execRows writes an OpenClaw state dir at dir whose store holds n running
// exec rows.
func execRows(t *testing.T, dir string, n int) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "state"), 0o755)
	db, err := sql.Open("sqlite", filepath.Join(dir, "state", "openclaw.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	qs := []string{`CREATE TABLE IF NOT EXISTS task_runs (task_id TEXT, task_kind TEXT, source_id TEXT, requester_session_key TEXT, task TEXT, status TEXT, created_at INTEGER)`, `DELETE FROM task_runs`}
	for i := range n {
		qs = append(qs, fmt.Sprintf(`INSERT INTO task_runs VALUES ('t%d', 'exec', 's%d', 'k', 'sleep 600; : cache-test', 'running', %d)`, i, i, time.Now().UnixMilli()))
	}
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// loadWith runs one run's Begin and Load with the state dir reaper's own
// environment names in env, read in this process, and returns its Set.
func loadWith(t testing.TB, env, dir string, cache *Cache, roots []*platform.Process) *Set {
	t.Helper()
	snap, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	opts := Options{Discover: true, Clients: testClients, Cache: cache, Getenv: func(k string) string {
		if k == env {
			return dir
		}
		return ""
	}}
	p := Begin(context.Background(), opts)
	p.readers.asRoot = false // this is about which reads are made, not how
	p.Start(snap)
	set, err := Load(context.Background(), opts, p, snap, nil, roots)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// onePass is loadWith for an OpenClaw state dir: how many exec rows its
// evidence holds for the dir and what the run says of the dir.
func onePass(t *testing.T, dir string, cache *Cache, roots []*platform.Process) (int, DirRead) {
	t.Helper()
	set := loadWith(t, "OPENCLAW_STATE_DIR", dir, cache, roots)
	rows := 0
	for _, l := range set.Ledgers {
		// This dir's store only: the pass reads the host's too (a gateway
		// another test or user runs names its own state dir).
		if strings.Contains(l.Source, "task_runs") && strings.Contains(l.Source, dir) {
			rows += len(l.Runs)
		}
	}
	for _, r := range set.Read {
		if r.Path == dir {
			return rows, r
		}
	}
	t.Fatalf("the dir was not listed: %+v", set.Read)
	return 0, DirRead{}
}

// A watch's pass takes a user's state as the last pass read it while none
// of that user's trees is a candidate, and reads it again when one is, or
// when the cache is refreshed. The rows judged prove which it did (the
// store changes before every pass), and the control is the pass without a
// cache, which always reads.
func TestCacheReadsWhatThePassMayActOn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oc")
	execRows(t, dir, 1)
	self := &platform.Process{PID: os.Getpid(), UID: platform.EUID()}
	other := &platform.Process{PID: 1, UID: self.UID + 1}
	cache := NewCache()
	steps := []struct {
		name    string
		refresh bool
		roots   []*platform.Process
		rowsNow int  // the store's rows before the pass
		read    bool // the pass reads the dir
	}{
		{"first pass", false, nil, 1, true},
		{"no candidate at all", false, nil, 2, false},
		{"a candidate of the dir's user", false, []*platform.Process{self}, 2, true},
		// Root's state speaks for every user's trees: read again as root.
		{"a candidate of another user's only", false, []*platform.Process{other}, 3, self.UID == 0},
		{"refreshed (backstop, reload)", true, nil, 4, true},
	}
	want := 0
	for _, st := range steps {
		execRows(t, dir, st.rowsNow)
		if st.refresh {
			cache.Refresh()
		}
		reads0, reused0 := cache.Counts()
		rows, read := onePass(t, dir, cache, st.roots)
		reads, reused := cache.Counts()
		if st.read {
			want = st.rowsNow
		}
		// The rows judged say which read was used: the store changes
		// before every pass, so a fresh read and the cached one differ.
		// The cache's counts cover every dir of the host the pass read
		// (another user's clients among them), so they are logged only.
		if rows != want || read.Err != "" || read.Skipped != "" {
			t.Errorf("%s: %d rows judged (%+v); want %d rows, read %v", st.name, rows, read, want, st.read)
		}
		t.Logf("%s: %d rows judged; the pass read %d dirs, took %d from the cache", st.name, rows, reads-reads0, reused-reused0)
	}
	if rows, _ := onePass(t, dir, nil, nil); rows != 4 {
		t.Errorf("control, no cache: %d rows, want the store's 4", rows)
	}
}

// A state dir of a uid that owns no process in the table is not read: it
// could speak for nothing there. It is listed as not read, by design, and
// is nobody's doubt. The control: once a process of that uid runs, it is
// read (in a reader child as that uid).
func TestIdleUsersStateIsNotRead(t *testing.T) {
	requireChildren(t)
	const idle = 65531
	dir := userState(t, idle)
	_, read := onePassAsRoot(t, dir)
	if !strings.Contains(read.Skipped, "uid 65531 owns no process") || read.Err != "" {
		t.Errorf("the idle uid's dir: %+v, want skipped", read)
	}

	sleep := exec.Command("sleep", "60")
	sleep.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: idle, Gid: idle}}
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	if problems, read := onePassAsRoot(t, dir); read.Skipped != "" || read.Err != "" || problems != 0 {
		t.Errorf("control, uid %d runs a process: %+v, %d problems; want read", idle, read, problems)
	}
}

// onePassAsRoot is a root run's Begin and Load with the state dir reaper's
// own environment names, and what it says of the dir: its read, and the
// problems that name it (the pass reads the host's other state too, which
// a busy machine's other work can make slow or unreadable).
func onePassAsRoot(t *testing.T, dir string) (int, DirRead) {
	t.Helper()
	snap, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	opts := Options{Discover: true, Clients: testClients, Getenv: func(k string) string {
		if k == "OPENCLAW_STATE_DIR" {
			return dir
		}
		return ""
	}}
	p := Begin(context.Background(), opts)
	p.Start(snap)
	set, err := Load(context.Background(), opts, p, snap, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mine := 0
	for _, pr := range set.Problems {
		if strings.Contains(pr.Msg, dir) {
			mine++
		}
	}
	for _, r := range set.Read {
		if r.Path == dir {
			return mine, r
		}
	}
	t.Fatalf("the dir was not listed: %+v", set.Read)
	return 0, DirRead{}
}

// Root reads its own state, that no other user can have written or put in
// its place, in its own process: with every reader child failing at once
// (a deadline of 1 ns), root's private dir is still read. The controls:
// the same dir made writable by others, or below a dir a user owns, is
// read in a child, and that child fails.
func TestRootsOwnPrivateStateIsReadInProcess(t *testing.T) {
	requireChildren(t)
	old := ChildDeadline
	ChildDeadline = time.Nanosecond
	t.Cleanup(func() { ChildDeadline = old })
	dir := userState(t, 0)
	parent := filepath.Dir(dir)
	for _, tt := range []struct {
		mode, parentOwner int
		child             bool
		reason            string
	}{
		{0o755, 0, false, "private: in this process"},
		{0o777, 0, true, "writable by others: in a reader child (control)"},
		// A user who owns the dir above could put their own in its place.
		{0o755, 65534, true, "private, below a user's dir: in a reader child (control)"},
	} {
		os.Chmod(dir, os.FileMode(tt.mode))
		os.Chown(parent, tt.parentOwner, tt.parentOwner)
		r := readAll(context.Background(), []Dir{{Path: dir, UID: 0, Client: "openclaw"}}, testReaders(true))[0]
		if failed := r.err != nil; failed != tt.child {
			t.Errorf("%s: err %v, want a failed child %v", tt.reason, r.err, tt.child)
		}
	}
}

// Whose state a scan reads is chosen by the owners of the /proc/PID
// dirs, which the kernel gives as each task's effective uid — even for a
// task that is not dumpable, whose files inside show root (proc(5);
// task_dump_owner makes only the non-directories root's). So a user whose
// only process is not dumpable has their state read. A process whose
// effective uid is root and real uid the user's (a set-user-ID program)
// shows root: a scan takes that user for one with no process and passes
// their state over — until that process is the root of an orphaned tree:
// then its real uid is read, as the gate reads it, and the user's state is
// read after all. The control: the same table without the orphan passes
// it over.
func TestOwnersStateIsRead(t *testing.T) {
	requireChildren(t)
	const python = "/usr/bin/python3" // the system's: one every user may run
	if _, err := os.Stat(python); err != nil {
		t.Skip("needs /usr/bin/python3, to clear a process's dumpable flag or take a root euid")
	}
	const uid = 65529
	dir := userState(t, uid)
	start := func(t *testing.T, script string, cred *syscall.Credential) int {
		p := exec.Command(python, "-c", script+"; print('ready', flush=True); time.sleep(60)")
		p.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, _ := p.StdoutPipe()
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Process.Kill(); p.Wait() })
		if _, err := out.Read(make([]byte, 8)); err != nil {
			t.Fatal(err)
		}
		return p.Process.Pid
	}
	owner := func(path string) uint32 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Uid
	}
	read := func(t *testing.T, roots ...int) bool {
		snap, err := platform.ReadSnapshot(platform.DefaultProcRoot)
		if err != nil {
			t.Fatal(err)
		}
		var rs []*platform.Process
		for _, pid := range roots {
			rs = append(rs, snap.Get(pid))
		}
		opts := Options{Discover: true, Clients: testClients, Getenv: func(k string) string {
			if k == "OPENCLAW_STATE_DIR" {
				return dir
			}
			return ""
		}}
		pend := Begin(context.Background(), opts)
		pend.Start(snap)
		set, err := Load(context.Background(), opts, pend, snap, nil, rs)
		snap.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []DirRead
		for _, r := range set.Read {
			if r.Path == dir {
				got = append(got, r)
			}
		}
		if len(got) != 1 {
			t.Fatalf("the dir listed %d times: %+v", len(got), got)
		}
		return got[0].Skipped == "" && got[0].Err == ""
	}
	t.Run("not dumpable", func(t *testing.T) {
		pid := start(t, "import ctypes,time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)", &syscall.Credential{Uid: uid, Gid: uid})
		if got := owner(fmt.Sprintf("/proc/%d/stat", pid)); got != 0 {
			t.Skipf("its /proc files are uid %d's here, not root's", got)
		}
		if got := owner(fmt.Sprintf("/proc/%d", pid)); got != uid {
			t.Fatalf("its /proc dir is uid %d's, want %d", got, uid)
		}
		if !read(t) {
			t.Errorf("the state of a user whose only process is not dumpable was passed over")
		}
	})
	t.Run("root's euid", func(t *testing.T) {
		pid := start(t, fmt.Sprintf("import os,time; os.setresuid(%d, 0, 0)", uid), nil)
		if got := owner(fmt.Sprintf("/proc/%d", pid)); got != 0 {
			t.Fatalf("its /proc dir is uid %d's, want root's", got)
		}
		for _, orphan := range []bool{false, true} {
			var roots []int
			if orphan {
				roots = append(roots, pid)
			}
			if got := read(t, roots...); got != orphan {
				t.Errorf("its process the root of an orphaned tree %v: the dir read %v, want %v", orphan, got, orphan)
			}
		}
	})
}

// sessionFile writes a Claude Code session file for pid, its claude
// started at ms (since the epoch).
func sessionFile(t testing.TB, dir string, pid int, id string, ms int64) {
	t.Helper()
	b := fmt.Sprintf(`{"pid":%d,"sessionId":%q,"cwd":"/w","startedAt":%d,"procStart":"900","version":"2.1.331","kind":"interactive"}`, pid, id, ms)
	file := filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", pid))
	if err := os.WriteFile(file, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(ms)
	os.Chtimes(file, at, at) // written when its claude started
}

// claudePass is loadWith for a Claude Code config dir: the session ids
// its evidence holds.
func claudePass(t testing.TB, dir string, cache *Cache, roots []*platform.Process) map[string]bool {
	t.Helper()
	set := loadWith(t, "CLAUDE_CONFIG_DIR", dir, cache, roots)
	ids := map[string]bool{}
	for _, s := range set.Sessions {
		if strings.HasPrefix(s.Proof, "the session file "+dir) {
			ids[s.ID] = true
		}
	}
	return ids
}

// A watch's pass reads a config dir it read before by change: the session
// files inotify named since (made, or removed) and nothing else of
// sessions/ — a file rewritten in place, or removed, without a word is
// as the last read had it — so that 300 stale files cost it what one
// does; past the bound of 256 the oldest of gone claudes is let go of.
// The control is a refreshed pass (the backstop's), which reads the dir
// whole and sees what changed unannounced.
func TestCacheReadsSessionsByChange(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claude")
	os.MkdirAll(filepath.Join(dir, "sessions"), 0o700)
	base := time.Now().Add(-time.Hour).UnixMilli()
	const stale = 300
	for k := range stale {
		sessionFile(t, dir, 4000000+k, fmt.Sprintf("old-%d", k), base+int64(k)*1000) // no such pids
	}
	self := &platform.Process{PID: os.Getpid(), UID: platform.EUID()}
	roots := []*platform.Process{self} // the dir's user's trees are candidates: its state is read fresh
	uid := self.UID
	cache := NewCache()
	first := claudePass(t, dir, cache, roots)
	if len(first) != maxSessionsRead || !first[fmt.Sprintf("old-%d", stale-1)] || first["old-0"] {
		t.Fatalf("first pass: %d sessions (newest %v, oldest %v); want the newest %d", len(first), first[fmt.Sprintf("old-%d", stale-1)], first["old-0"], maxSessionsRead)
	}
	// Unannounced: the newest file rewritten in place, another removed.
	sessionFile(t, dir, 4000000+stale-1, "rewritten", base+(stale-1)*1000)
	os.Remove(filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", 4000000+stale-2)))
	// Announced: a new session, and one file removed.
	sessionFile(t, dir, 4100000, "new", time.Now().UnixMilli())
	cache.Changed(uid, filepath.Join(dir, "sessions", "4100000.json"))
	os.Remove(filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", 4000000+stale-3)))
	cache.Changed(uid, filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", 4000000+stale-3)))
	reads0, _ := cache.Counts()
	second := claudePass(t, dir, cache, roots)
	switch {
	case !second["new"]:
		t.Error("by change: the new session's file, announced, was not read")
	case second[fmt.Sprintf("old-%d", stale-3)]:
		t.Error("by change: the file removed, announced, is still held")
	case !second[fmt.Sprintf("old-%d", stale-1)] || second["rewritten"]:
		t.Error("by change: a file rewritten in place unannounced was read again: the dir was read whole")
	case !second[fmt.Sprintf("old-%d", stale-2)]:
		t.Error("by change: a file removed unannounced is gone: the dir was listed")
	case len(second) != maxSessionsRead:
		t.Errorf("by change: %d sessions held, want the bound, %d (the oldest gone claude's let go of)", len(second), maxSessionsRead)
	}
	if reads, _ := cache.Counts(); reads == reads0 {
		t.Error("the second pass took the dir from the cache: want it read (by change)")
	}
	cache.Refresh()
	third := claudePass(t, dir, cache, roots)
	if !third["rewritten"] || third[fmt.Sprintf("old-%d", stale-2)] || !third["new"] {
		t.Errorf("control, refreshed: rewritten %v, removed unannounced %v, new %v; want the dir read whole", third["rewritten"], third[fmt.Sprintf("old-%d", stale-2)], third["new"])
	}
}

// maxSessionsRead is Claude Code's bound on the session files read from
// one config dir (client/claudecode).
const maxSessionsRead = 256

// BenchmarkPassStale is one watch pass's read of a Claude Code config dir
// holding N stale session files, one new session announced since the
// last pass: by change, the pass reads that one file (what the dir holds
// costs nothing more); "whole" is the same pass with the cache refreshed
// each time, a backstop's full read — the cost every hint pass paid
// before. Run by hand:
//
//	go test ./run/gather -run '^$' -bench PassStale -benchtime 200x
func BenchmarkPassStale(b *testing.B) {
	for _, n := range []int{10, 10000} {
		for _, mode := range []string{"bychange", "whole"} {
			b.Run(fmt.Sprintf("%s/%d", mode, n), func(b *testing.B) {
				dir := filepath.Join(b.TempDir(), "claude")
				os.MkdirAll(filepath.Join(dir, "sessions"), 0o700)
				base := time.Now().Add(-time.Hour).UnixMilli()
				for k := range n {
					sessionFile(b, dir, 4000000+k, fmt.Sprintf("old-%d", k), base+int64(k))
				}
				self := &platform.Process{PID: os.Getpid(), UID: platform.EUID()}
				roots := []*platform.Process{self}
				cache := NewCache()
				claudePass(b, dir, cache, roots)
				b.ResetTimer()
				for i := range b.N {
					pid := 4200000 + i
					sessionFile(b, dir, pid, fmt.Sprintf("new-%d", i), time.Now().UnixMilli())
					cache.Changed(self.UID, filepath.Join(dir, "sessions", fmt.Sprintf("%d.json", pid)))
					if mode == "whole" {
						cache.Refresh()
					}
					if ids := claudePass(b, dir, cache, roots); !ids[fmt.Sprintf("new-%d", i)] {
						b.Fatalf("pass %d: the new session not read", i)
					}
				}
			})
		}
	}
}

// A session file read as it was being written (announced at its
// creation, its end not) is read again by the next pass by change,
// though nothing names it, until it parses. Control: a file that parsed
// is not read again unannounced.
func TestCacheRereadsUnsettled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claude")
	os.MkdirAll(filepath.Join(dir, "sessions"), 0o700)
	sessionFile(t, dir, 4000001, "settled", time.Now().UnixMilli())
	self := &platform.Process{PID: os.Getpid(), UID: platform.EUID()}
	roots := []*platform.Process{self}
	cache := NewCache()
	claudePass(t, dir, cache, roots)
	half := filepath.Join(dir, "sessions", "4000002.json")
	os.WriteFile(half, []byte(`{"pid":4000002,"sessionId":"wri`), 0o600) // cut short
	cache.Changed(self.UID, half)
	if ids := claudePass(t, dir, cache, roots); ids["written"] {
		t.Fatal("a file cut short was read whole")
	}
	sessionFile(t, dir, 4000002, "written", time.Now().UnixMilli()) // its end: no event
	sessionFile(t, dir, 4000001, "rewritten", time.Now().UnixMilli())
	ids := claudePass(t, dir, cache, roots)
	if !ids["written"] {
		t.Error("the file read while written was not read again")
	}
	if !ids["settled"] || ids["rewritten"] {
		t.Error("control: a settled file was read again unannounced")
	}
}

// A dir whose last read could not be judged (its reader's output wrong,
// the dir missing) has nothing to merge a read by change into: it is read
// whole. Control: the same dir with a sound last read is read by change.
func TestCacheDeltaNeedsASoundRead(t *testing.T) {
	dir := t.TempDir()
	cc := testClients.ByName("claude-code")
	d := Dir{Path: dir, UID: platform.EUID(), Client: "claude-code"}
	for _, sound := range []bool{false, true} {
		wire := []byte("null")
		if sound {
			wire = cc.Read(dir)
		}
		read := cc.Decode(wire, d.Path, d.UID)
		if read.Sound() != sound {
			t.Fatalf("the last read's soundness: %v, want %v", read.Sound(), sound)
		}
		c := &Cache{} // past its first pass: not every dir is read whole
		c.reads = map[cacheKey]readResult{keyOf(d): {dir: d, read: read}}
		c.fresh(nil, nil)
		if _, ok := c.delta(d, true); ok != sound {
			t.Errorf("sound last read %v: read by change %v, want %v", sound, ok, sound)
		}
	}
}
