package gather

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/claudecode"
	"github.com/orphanreaper/reaper/client/declared"
	"github.com/orphanreaper/reaper/client/openclaw"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"

	_ "modernc.org/sqlite"
)

// testClients are the clients these tests read the state of: gather is
// given a set, and knows none by name.
var testClients = client.NewSet(openclaw.Client, claudecode.Client)

// testReaders reads as root (in reader children, within a fresh budget)
// or in this process.
func testReaders(asRoot bool) *readers {
	rd := &readers{clients: testClients, asRoot: asRoot}
	if asRoot {
		rd.budget = newBudget(context.Background(), nil)
	}
	return rd
}

// This test binary is also the reader child the tests start.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ChildCommand {
		os.Exit(ChildMain(os.Args[2:], os.Stdout, os.Stderr, testClients, declared.FromSpec))
	}
	// The readers' time bounds are the product's, for a reaper's run on a
	// host; here every test's readers start while the other packages' tests
	// load the machine (a reader past 5 s at load 8 while it takes 0.15 s
	// alone). What is read is what these tests check; the tests of the
	// deadlines set theirs.
	ChildDeadline, maxReadTime = time.Minute, 2*time.Minute
	os.Exit(skips.Main(m))
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skips.Skip(t, "needs root: run the tests as root (CI does) to exercise this")
	}
}

// requireChildren skips a test that starts reader children under the race
// detector, whose allocator does not fit in the children's RLIMIT_DATA.
func requireChildren(t *testing.T) {
	t.Helper()
	requireRoot(t)
	requireNoRace(t)
}

// requireNoRace skips a test that starts a reader child under the race
// detector.
func requireNoRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		skips.Skip(t, "reader children do not run under -race (ThreadSanitizer's allocator exceeds their RLIMIT_DATA)")
	}
}

// A dir a process names is read only when it is absolute, clean, not a
// root (/, C:\) nor below /proc, reached through no link, and the naming
// uid's.
func TestCheckNamed(t *testing.T) {
	me := platform.EUID()
	dir := t.TempDir()
	real := filepath.Join(dir, "state")
	os.Mkdir(real, 0o755)
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	sep := string(filepath.Separator)
	tests := []struct {
		value string
		uid   uint32
		want  string // "" accepted, else part of the refusal
	}{
		{real, me, ""},
		{"../..", me, "not an absolute path"},
		{real + sep, me, "not a clean path"},
		{real + sep + ".." + sep + "state", me, "not a clean path"},
		{dir + sep + sep + "state", me, "not a clean path"},
		{filepath.VolumeName(dir) + sep, me, "not a state dir"},
		{filepath.Join(dir, "file"), me, "not a directory"},
		{filepath.Join(dir, "missing"), me, "no such file"},
		{real, me + 1, "owned by uid"},
	}
	if runtime.GOOS != "windows" {
		tests = append(tests, []struct {
			value string
			uid   uint32
			want  string
		}{
			{"/proc/self/cwd", me, "not a state dir"},
			{"/proc", me, "not a state dir"},
		}...)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Logf("no symbolic link made here (%v): its cases are left out", err)
	} else if _, err := os.Lstat(link); err != nil {
		t.Logf("the symbolic link made is not there (wine 8's CreateSymbolicLinkW makes none: %v): its cases are left out", err)
	} else {
		tests = append(tests, []struct {
			value string
			uid   uint32
			want  string
		}{
			{link, me, "symbolic link"},
			{filepath.Join(link, "x"), me, "symbolic link"},
		}...)
	}
	for _, tt := range tests {
		err := checkNamed(tt.value, tt.uid)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q as uid %d: %v, want accepted", tt.value, tt.uid, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q as uid %d: %v, want %q", tt.value, tt.uid, err, tt.want)
		}
	}
}

// The dirs processes of one uid name are bounded per run; each refusal is
// said once, with what named it.
func TestNamedBound(t *testing.T) {
	var l dirList
	for i := 0; i < maxNamedPerUID+3; i++ {
		d := t.TempDir()
		l.addNamed("openclaw", d, func() uint32 { return platform.EUID() }, "pid 1", false)
	}
	if len(l.dirs) != maxNamedPerUID || len(l.refuse) != 3 || !strings.Contains(l.refuse[0], "named more than") {
		t.Errorf("%d dirs, refusals %q: want %d and 3", len(l.dirs), l.refuse, maxNamedPerUID)
	}
	l.addNamed("openclaw", "../x", func() uint32 { return 1 }, "pid 2", false) // another uid: uid 0 has used its bound
	if got := l.refuse[len(l.refuse)-1]; !strings.HasPrefix(got, "pid 2: state dir not read") {
		t.Errorf("refusal %q does not name what named it", got)
	}
}

// The dirs guessed below one home are one name against the bound: the
// processes of a uid with ten homes between them, each guessed for three
// clients, spend it on the homes (8 of 10), not on 30 dirs (the first 8
// of which would leave the third home's dirs, and every dir named outright
// after them, unread). The control: dirs named outright count one each.
func TestGuessedDirsCountPerHome(t *testing.T) {
	var l dirList
	var homes []string
	for range 10 {
		homes = append(homes, t.TempDir())
	}
	for _, h := range homes {
		for _, c := range []string{"cline", "continue-cli", "copilot-cli"} {
			d := filepath.Join(h, "."+c)
			os.Mkdir(d, 0o700)
			l.addNamed(c, d, func() uint32 { return platform.EUID() }, "orphan's HOME", true)
		}
	}
	if len(l.dirs) != 3*maxNamedPerUID || len(l.refuse) != 3*(10-maxNamedPerUID) {
		t.Errorf("%d dirs read, %d refused: want the %d homes' %d and the rest's %d", len(l.dirs), len(l.refuse), maxNamedPerUID, 3*maxNamedPerUID, 3*(10-maxNamedPerUID))
	}
	var outright dirList
	for _, h := range homes {
		outright.addNamed("openclaw", h, func() uint32 { return platform.EUID() }, "OPENCLAW_STATE_DIR", false)
	}
	if len(outright.dirs) != maxNamedPerUID {
		t.Errorf("control: %d dirs named outright read, want %d", len(outright.dirs), maxNamedPerUID)
	}
}

// A dir guessed below a process's HOME that does not exist is no warning:
// most processes' homes hold no such dir. The controls: the same missing
// dir named outright is one, and a guessed dir that exists but is another
// uid's is one too.
func TestGuessedDirMissing(t *testing.T) {
	var l dirList
	missing := filepath.Join(t.TempDir(), ".cline")
	l.addNamed("cline", missing, func() uint32 { return platform.EUID() }, "orphan pid 7's HOME", true)
	if len(l.refuse) != 0 || len(l.dirs) != 0 {
		t.Errorf("guessed and missing: refusals %q, dirs %v; want none", l.refuse, l.dirs)
	}
	l.addNamed("openclaw", missing, func() uint32 { return platform.EUID() }, "orphan pid 8's OPENCLAW_STATE_DIR", false)
	if len(l.refuse) != 1 || !strings.Contains(l.refuse[0], "no such file") {
		t.Errorf("control, named outright: refusals %q; want the missing dir", l.refuse)
	}
	l.addNamed("cline", t.TempDir(), func() uint32 { return platform.EUID() + 1 }, "orphan pid 9's HOME", true)
	if len(l.refuse) != 2 || !strings.Contains(l.refuse[1], "not by uid") {
		t.Errorf("control, guessed but another uid's: refusals %q; want it refused", l.refuse)
	}
}

// stateOf makes an OpenClaw state dir owned by uid with a lease file, and
// an acpx dir only root may enter: a reader running as uid cannot read the
// lease (the control that it runs as uid); root in-process could.
func userState(t *testing.T, uid int) string {
	t.Helper()
	base, err := os.MkdirTemp("", "reaper-gather-") // t.TempDir's parent is private
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "oc")
	os.MkdirAll(filepath.Join(dir, "acpx"), 0o755)
	lease := filepath.Join(dir, "acpx", "process-leases.json")
	os.WriteFile(lease, []byte(`{"version":1,"leases":[]}`), 0o644)
	for _, p := range []string{dir, filepath.Join(dir, "acpx"), lease} {
		os.Chown(p, uid, uid)
	}
	return dir
}

// As root, a user's state is read in a child running as that user: a file
// in a directory only root may enter is not readable there. The same dir
// read in-process as root is (the control).
func TestReaderRunsAsTheUser(t *testing.T) {
	requireChildren(t)
	dir := userState(t, 65534)
	os.Chmod(filepath.Join(dir, "acpx"), 0o700)
	os.Chown(filepath.Join(dir, "acpx"), 0, 0)
	d := []Dir{{Path: dir, UID: 65534, Client: "openclaw"}}
	got := readAll(context.Background(), d, testReaders(true))
	if got[0].err != nil || got[0].read == nil {
		t.Fatalf("read: %+v (%v)", got[0], got[0].err)
	}
	if p := problemsOf(got[0]); len(p) != 1 || !errors.Is(p[0], fs.ErrPermission) {
		t.Errorf("as uid 65534: problems %+v, want the lease file's permission denied", p)
	}
	inProcess := readAll(context.Background(), d, testReaders(false))
	if p := problemsOf(inProcess[0]); len(p) != 0 {
		t.Errorf("control, root in-process: problems %+v, want none", p)
	}
}

// A reader that fails is doubt for its own uid only, never for everyone,
// and each dir's failure says which reader it was.
func TestFailedReaderIsItsUsersDoubt(t *testing.T) {
	requireChildren(t)
	old := ChildDeadline
	ChildDeadline = time.Nanosecond
	t.Cleanup(func() { ChildDeadline = old })
	a, b := userState(t, 65534), userState(t, 65533)
	set := &Set{}
	for _, r := range readAll(context.Background(), []Dir{{Path: a, UID: 65534, Client: "openclaw"}, {Path: b, UID: 65533, Client: "openclaw"}}, testReaders(true)) {
		set.addRead(r, nil, testClients)
	}
	var uids []uint32
	for _, d := range set.Doubts() {
		if d.All {
			t.Errorf("doubt for all: %+v", d)
		}
		uids = append(uids, d.UID)
	}
	if !reflect.DeepEqual(uids, []uint32{65534, 65533}) {
		t.Errorf("doubts for %v, want 65534 and 65533 (problems %+v)", uids, set.Problems)
	}
	ChildDeadline = old
	set = &Set{}
	for _, r := range readAll(context.Background(), []Dir{{Path: a, UID: 65534, Client: "openclaw"}}, testReaders(true)) {
		set.addRead(r, platform.NewSnapshot(nil, "boot", time.Hour, time.Now()), testClients)
	}
	if len(set.Problems) != 0 {
		t.Errorf("control, in time: problems %+v", set.Problems)
	}
}

// macOS keeps accounts in Directory Services; the homes under /Users,
// each owned by its account, stand for them. Root's own directories,
// Shared and dot entries are not homes.
func TestDirAccounts(t *testing.T) {
	requireRoot(t)
	root := t.TempDir()
	for _, d := range []string{"alice", "Shared", ".localized", "rootowned"} {
		os.Mkdir(filepath.Join(root, d), 0o755)
	}
	os.Chown(filepath.Join(root, "alice"), 65534, 65533)
	os.Chown(filepath.Join(root, "Shared"), 65534, 65534)
	os.WriteFile(filepath.Join(root, "file"), nil, 0o644)
	got := dirAccounts(root)
	want := []account{{65534, 65533, filepath.Join(root, "alice"), ""}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("accounts %+v, want %+v", got, want)
	}
}

// Load judges the reads against the snapshot only once it is done with
// the snapshot itself (which reads details lazily and is not safe to
// share): under -race, judging a state dir's exec rows while Load looks up
// every root's OPENCLAW_STATE_DIR would be reported. The control is that
// the dir's rows are judged at all.
func TestLoadJudgesAfterTheTable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oc")
	os.MkdirAll(filepath.Join(dir, "state"), 0o755)
	db, err := sql.Open("sqlite", filepath.Join(dir, "state", "openclaw.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE task_runs (task_id TEXT, task_kind TEXT, source_id TEXT, requester_session_key TEXT, task TEXT, status TEXT, created_at INTEGER)`,
		fmt.Sprintf(`INSERT INTO task_runs VALUES ('t1', 'exec', 's1', 'k', 'sleep 600; : load-test', 'running', %d)`, time.Now().UnixMilli()),
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	snap, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var roots []*platform.Process
	for i := range snap.Procs {
		roots = append(roots, &snap.Procs[i])
	}
	opts := Options{Discover: true, Clients: testClients, Getenv: func(k string) string {
		if k == "OPENCLAW_STATE_DIR" {
			return dir
		}
		return ""
	}}
	p := Begin(context.Background(), opts)
	p.readers.asRoot = false // read in-process: reader children do not run under -race, and this is about the judging
	set, err := Load(context.Background(), opts, p, snap, nil, roots)
	if err != nil {
		t.Fatal(err)
	}
	judged := false
	for _, l := range set.Ledgers {
		judged = judged || strings.Contains(l.Source, "task_runs") && len(l.Runs) == 1
	}
	if !judged {
		t.Errorf("the dir's exec row was not judged: ledgers %v, problems %v", set.Ledgers, set.Problems)
	}
}

// problemsOf are the problems of what a dir's reader printed, judged
// without a table.
func problemsOf(r readResult) []error {
	_, problems, _ := r.read.Judge(nil)
	return problems
}

// A client the policy declares is read as its user too: the child is told
// it by its spec (--client) and reads the session dir as uid 65534, to
// whom a session file mode 0 is closed. Read in this process as root, the
// same dir gives both sessions (the control).
func TestDeclaredClientReadAsTheUser(t *testing.T) {
	requireChildren(t)
	base, err := os.MkdirTemp("", "reaper-gather-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	dir := filepath.Join(base, "sessions")
	os.Mkdir(dir, 0o755)
	for name, mode := range map[string]os.FileMode{"800.json": 0o644, "810.json": 0} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(`{"pid": 800, "id": "s-`+name+`"}`), mode)
		os.Chmod(p, mode)
		os.Chown(p, 65534, 65534)
	}
	os.Chown(dir, 65534, 65534)
	agentx := declared.New(declared.Spec{Name: "agentx", Dir: "sessions", Pattern: "*.json", PID: "pid", ID: "id", Env: "AGENTX_SESSION"})
	d := []Dir{{Path: dir, UID: 65534, Client: "agentx"}}
	for _, asRoot := range []bool{true, false} {
		rd := testReaders(asRoot)
		rd.clients = client.NewSet(append(testClients.All(), agentx)...)
		got := readAll(context.Background(), d, rd)[0]
		if got.err != nil || got.read == nil {
			t.Fatalf("as root %v: %+v (%v)", asRoot, got, got.err)
		}
		ev, problems, _ := got.read.Judge(nil)
		switch {
		case asRoot && (len(ev.Ties) != 1 || len(problems) != 1 || !errors.Is(problems[0], fs.ErrPermission)):
			t.Errorf("in a child as uid 65534: ties %+v, problems %v; want one tie and 810.json's permission denied", ev.Ties, problems)
		case !asRoot && (len(ev.Ties) != 2 || len(problems) != 0):
			t.Errorf("control, root in-process: ties %+v, problems %v; want both sessions", ev.Ties, problems)
		}
	}
}

// TestMessagesSayTheSpentOnce: the dirs the run's time for reading left
// unread — one per user on a loaded host with many users — are one line
// of the report, with the count; the dirs a user's share left unread are
// one line per user; other problems one each.
func TestMessagesSayTheSpentOnce(t *testing.T) {
	var s Set
	for uid := range uint32(300) {
		s.addRead(readResult{dir: Dir{Path: fmt.Sprintf("/h/%d/.claude", uid), UID: 1000 + uid},
			err: &unreadError{user: 1000 + uid, msg: "not read: the run's time for reading users' state was spent", spent: true}}, nil, client.Set{})
	}
	for k := range 3 {
		s.addRead(readResult{dir: Dir{Path: fmt.Sprintf("/h/sub%d/.claude", k), UID: 200000 + uint32(k)},
			err: &unreadError{user: 65534, msg: "not read: a subordinate id"}}, nil, client.Set{})
	}
	got := s.Messages()
	if len(got) != 2 || !strings.Contains(got[0], "and 299 more state dirs left unread like it, of any user") || !strings.Contains(got[1], "and 2 more state dirs of uid 65534's") {
		t.Errorf("messages %q", got)
	}
	if len(s.Doubts()) != 303 {
		t.Errorf("%d doubts, want one per uid (303)", len(s.Doubts()))
	}
}
