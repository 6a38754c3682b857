package clienttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// Fixture is a client's state as the client writes it, for the contract
// suite: where the state dir is in a home, and the files an adapter reads,
// relative to the home (a dir's own files, and any beside it, as Claude
// Code's ~/.claude.json), each with content the client writes.
type Fixture struct {
	Dir   string
	Files map[string]string
}

// Make writes f's files below home and returns the state dir.
func (f Fixture) Make(t testing.TB, home string) string {
	t.Helper()
	for _, rel := range f.names() {
		path := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(f.Files[rel]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(home, f.Dir)
	os.MkdirAll(dir, 0o755)
	return dir
}

// names are f's files, in order.
func (f Fixture) names() []string {
	var out []string
	for n := range f.Files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// readBound is how long one Read may take on a hostile dir: it opens
// every file without blocking and reads within caps, so a FIFO or an
// endless file costs it nothing.
const readBound = 10 * time.Second

// Conformance is the client seam's contract, checked for c with its state
// as fx writes it. A new adapter that breaks it fails here, not in a
// user's run:
//
//   - Info: a name without ':', a title; its marks survive a Set's merge;
//   - HomeDirs returns only the dirs the uid owns, and Info.Homes names
//     them;
//   - Read never fails and never hangs, on the client's own state and on
//     each of its files made hostile (a FIFO, a link out of the dir,
//     garbage, 17 MiB, a directory, gone), and prints one line of JSON;
//   - the trip through JSON loses nothing (Decoded.Wire is the wire);
//   - Decode takes the read as the reader's uid, whatever the data says:
//     a read that says another uid or dir is a problem, never evidence;
//   - Judge's every claim is spoken by that uid;
//   - a pid its records name, held now by another user's process or by a
//     later one of the same user's, never proves its owner alive.
func Conformance(t *testing.T, c client.Client, fx Fixture) {
	t.Helper()
	info := c.Info()
	t.Run("info", func(t *testing.T) {
		if info.Name == "" || strings.ContainsRune(info.Name, ':') || info.Title == "" {
			t.Errorf("Info: name %q, title %q: want a name without ':' and a title", info.Name, info.Title)
		}
		if got := client.NewSet(c).Marks(); !reflect.DeepEqual(got, info.AllMarks()) {
			t.Errorf("the marks do not survive a Set's merge:\n%+v\nwant\n%+v", got, info.AllMarks())
		}
	})
	uid := platform.EUID()
	t.Run("home dirs", func(t *testing.T) {
		home := t.TempDir()
		dir := fx.Make(t, home)
		if got := c.HomeDirs(home, int(uid)); !reflect.DeepEqual(got, []string{dir}) {
			t.Errorf("HomeDirs of a home holding %s: %q", fx.Dir, got)
		}
		if got := c.HomeDirs(home, int(uid)+1); len(got) != 0 {
			t.Errorf("HomeDirs for another uid: %q; want none (the dir is not that uid's)", got)
		}
		// What help and doctor say is looked for is what is.
		said := false
		for _, h := range info.Homes {
			ok, err := path.Match(h, "~/"+filepath.ToSlash(fx.Dir))
			said = said || ok && err == nil
		}
		if !said {
			t.Errorf("Info.Homes %q does not name ~/%s, which HomeDirs finds", info.Homes, fx.Dir)
		}
	})
	t.Run("round trip", func(t *testing.T) {
		dir := fx.Make(t, t.TempDir())
		wire := c.Read(dir)
		if bytes.ContainsRune(wire, '\n') || !json.Valid(wire) {
			t.Fatalf("Read printed %.200q: want one line of JSON", wire)
		}
		d := c.Decode(wire, dir, uid)
		if got := d.Wire(); !bytes.Equal(got, wire) {
			t.Errorf("the read lost something through JSON:\n%s\nwant\n%s", got, wire)
		}
		ev, problems, _ := d.Judge(nil)
		if len(problems) > 0 {
			t.Errorf("the client's own state: problems %v", problems)
		}
		checkSpeaker(t, ev, uid)
		other := bytes.Replace(wire, []byte(`"uid":`+itoa(uid)), []byte(`"uid":`+itoa(uid+1)), 1)
		for what, w := range map[string][]byte{"another uid": other, "garbage": []byte("garbage"), "null": []byte("null")} {
			ev, problems, _ := c.Decode(w, dir, uid).Judge(nil)
			if len(problems) == 0 || len(ev.Ledgers)+len(ev.Ties)+len(ev.Servers) > 0 {
				t.Errorf("a read of %s: evidence %+v, problems %v; want a problem and no evidence", what, ev, problems)
			}
		}
		if ev, problems, _ := c.Decode(wire, dir+"x", uid).Judge(nil); len(problems) == 0 || len(ev.Ledgers) > 0 {
			t.Errorf("a read of another dir: problems %v; want one", problems)
		}
	})
	for _, rel := range fx.names() {
		for _, h := range hostile {
			t.Run(rel+": "+h.name, func(t *testing.T) {
				home := t.TempDir()
				dir := fx.Make(t, home)
				path := filepath.Join(home, rel)
				os.Remove(path)
				if err := h.make(path); err != nil {
					t.Skipf("cannot make %s here: %v", h.name, err)
				}
				judgeBounded(t, c, dir, uid)
			})
		}
	}
	t.Run("pid reuse", func(t *testing.T) { pidReuse(t, c, fx, 1000) }) // a user's records: root's speak of anyone
	t.Run("the dir gone", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), fx.Dir)
		if _, problems, _ := c.Decode(c.Read(dir), dir, uid).Judge(nil); len(problems) == 0 {
			t.Errorf("a dir that is not there: no problem")
		}
	})
}

// hostile are what a user can put where a client's file is.
var hostile = []struct {
	name string
	make func(path string) error
}{
	{"a FIFO", mkfifo},
	{"a link out of the dir", func(p string) error { return os.Symlink("/etc/passwd", p) }},
	{"garbage", func(p string) error { return os.WriteFile(p, []byte("\x00{\"garbage\": [1, 2,\xff"), 0o644) }},
	{"17 MiB", func(p string) error {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return f.Truncate(17 << 20)
	}},
	{"a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	{"gone", func(string) error { return nil }},
}

// judgeBounded reads dir within readBound, decodes it as uid's and
// judges it: whatever the files hold, no panic, no hang, one line of
// JSON, every claim uid's.
func judgeBounded(t *testing.T, c client.Client, dir string, uid uint32) {
	t.Helper()
	done := make(chan []byte, 1)
	go func() { done <- c.Read(dir) }()
	var wire []byte
	select {
	case wire = <-done:
	case <-time.After(readBound):
		t.Fatalf("Read did not return within %s", readBound)
	}
	if bytes.ContainsRune(wire, '\n') || !json.Valid(wire) {
		t.Fatalf("Read printed %.200q: want one line of JSON", wire)
	}
	ev, _, _ := c.Decode(wire, dir, uid).Judge(platform.NewSnapshot(nil, Boot, 10*time.Hour, Taken))
	checkSpeaker(t, ev, uid)
}

// checkSpeaker fails unless every claim in ev is uid's.
func checkSpeaker(t *testing.T, ev scan.Evidence, uid uint32) {
	t.Helper()
	for _, l := range ev.Ledgers {
		if l.Speaker != uid {
			t.Errorf("ledger %s spoken by %d, want %d", l.Source, l.Speaker, uid)
		}
	}
	for _, tie := range ev.Ties {
		if tie.Speaker != uid {
			t.Errorf("tie %s spoken by %d, want %d", tie.Where, tie.Speaker, uid)
		}
	}
	for _, s := range ev.Servers {
		if s.UID != uid {
			t.Errorf("server %s spoken by %d, want %d", s.Name, s.UID, uid)
		}
	}
}

// pidReuse checks that no owner c's records name counts as alive when
// its pid was reused: by another user's process that started long before
// (at boot), or by the same user's that started when the table was read.
// Each record must then say its owner is gone (scan.OwnerGone, which
// every ledger and tie is judged by), or claim nothing of that pid (a
// lock without a start time ties nothing to a live pid): a claim that the
// reused pid's process is the owner would keep the owner's leftovers
// alive. uid is whose records they are.
func pidReuse(t *testing.T, c client.Client, fx Fixture, uid uint32) {
	dir := fx.Make(t, t.TempDir())
	// The pids the records name, found where none of them lives: then
	// every record that names one says so.
	empty := platform.NewSnapshot([]platform.Process{Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)}, Boot, 10*time.Hour, Taken)
	ev, _, _ := Judge(c, dir, uid, empty)
	pids := map[int]bool{}
	for _, l := range ev.Ledgers {
		pids[l.Owner.PID] = l.Owner.PID > 1
	}
	for _, tie := range ev.Ties {
		pids[tie.Owner.PID] = tie.Owner.PID > 1
	}
	ticks := uint64(10 * 3600 * 100) // Taken, 10 hours after boot, at 100 ticks a second
	for _, reuse := range []struct {
		what  string
		uid   uint32
		start uint64
	}{{"another user's process, started at boot", uid + 1, 1}, {"the same user's process, started now", uid, ticks}} {
		t.Run(reuse.what, func(t *testing.T) {
			procs := []platform.Process{Proc(1, 0, 0, 0, []string{"/sbin/init"}, nil)}
			for pid, named := range pids {
				if named {
					p := Proc(pid, 1, pid, reuse.uid, []string{"sleep", "infinity"}, nil)
					p.StartTicks = reuse.start
					procs = append(procs, p)
				}
			}
			snap := platform.NewSnapshot(procs, Boot, 10*time.Hour, Taken)
			ev, _, _ := Judge(c, dir, uid, snap)
			r := scanEvidence(t, c, snap, ev)
			if reuse.uid != uid {
				// Another user's process at the pid is evidence the
				// owner is gone: no record may go silent for it.
				still := map[int]bool{}
				for _, l := range ev.Ledgers {
					still[l.Owner.PID] = true
				}
				for _, tie := range ev.Ties {
					still[tie.Owner.PID] = true
				}
				for pid, named := range pids {
					if named && !still[pid] {
						t.Errorf("pid %d, named while it was gone, is named by no record once another user's process holds it: that is proof its owner is gone", pid)
					}
				}
			}
			for _, l := range ev.Ledgers {
				if gone, why := r.OwnerGone(l); pids[l.Owner.PID] && !gone {
					t.Errorf("ledger %s: its owner pid %d, held by %s, counts as alive: %s", l.Source, l.Owner.PID, reuse.what, why)
				}
			}
			for _, tie := range ev.Ties {
				if tie.Owner.Gone != "" || !pids[tie.Owner.PID] {
					continue
				}
				if gone, why := scan.OwnerGone(snap, scan.RecordedBy(tie.Speaker, tie.Owner.PID, tie.Owner.Start)); !gone {
					t.Errorf("tie %s: its owner pid %d, held by %s, counts as alive: %s", tie.Where, tie.Owner.PID, reuse.what, why)
				}
			}
		})
	}
}

func itoa(u uint32) string { b, _ := json.Marshal(u); return string(b) }

// FuzzRead fuzzes c's Read, Decode and Judge with fx's files, one of them
// (which) replaced by the fuzzer's bytes: whatever a user writes there,
// no panic, one line of JSON, every claim the reader's uid's. Seeded with
// fx's own content.
func FuzzRead(f *testing.F, c client.Client, fx Fixture) {
	names := fx.names()
	for i, n := range names {
		f.Add(uint8(i), []byte(fx.Files[n]))
	}
	// One home for the run, its files written afresh each time: a
	// directory made and removed per input was most of the cost.
	home := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		dir := fx.Make(t, home)
		if err := os.WriteFile(filepath.Join(home, names[int(which)%len(names)]), b, 0o644); err != nil {
			t.Fatal(err)
		}
		judgeBounded(t, c, dir, platform.EUID())
	})
}
