package sqlitestore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// Timeout bounds the whole read of one store: its writer may hold it, and
// reaper must not wait on it. (A variable for the tests.)
var Timeout = 2 * time.Second

// A root reaper reads a user's SQLite stores without writing a byte near
// them. SQLite's own unix VFS, even with mode=ro, creates a WAL database's
// -shm and -wal files when they are missing (as root, chowned to the
// database's owner; measured here, and os_unix.c says so): a file created
// by root, by name, in a directory its user controls. So reaper links no
// SQLite engine: it reads the file format itself (file.go) through exactly
// two descriptors it opened beneath the state dir (platform.OpenBeneath:
// no link followed, never blocking, a regular file of the state's user):
// the database and its -wal. It replays the WAL's committed frames into
// an index in its own heap, as SQLite does for a WAL without shared
// memory (https://www.sqlite.org/wal.html, "Use of WAL Without
// Shared-Memory"): reaper takes no lock the gateway could wait on, writes
// nothing, and sees every transaction committed to the WAL when the read
// began.
//
// Taking no lock, it is not held off by the writer's checkpoints: one that
// copies frames into the database file during the read, or a WAL restarted
// from its first frame, could show it parts of two states. Both are seen
// from outside: a checkpoint writes the database file (its size or change
// time move), a restart rewrites the WAL header's salts or truncates the
// file (https://www.sqlite.org/fileformat2.html#walformat). The files are
// fingerprinted before and after each read; a read whose fingerprint
// moved is thrown away and done again, up to storeTries times, then the
// store is reported as not read.

const (
	// storeTries bounds the reads of a store that changes under them.
	storeTries = 3
	// maxWAL bounds a WAL reaper replays: OpenClaw's checkpoints keep it
	// near 4 MiB; a larger one is refused, not replayed for seconds.
	maxWAL = 256 << 20
	// walHeader is the size of a WAL file's header.
	walHeader = 32
)

// Query reads the SQLite database rel below dir, owner's, and runs
// fn on it, each try within Timeout and a second more. fn may run
// more than once (a read the writer's checkpoint overlapped is done
// again), so it must start its results afresh each time. An error wraps
// fs.ErrNotExist when there is no database.
func Query(dir, rel string, owner int, fn func(db *DB) error) error {
	path := filepath.Join(dir, rel)
	for try := 1; ; try++ {
		moved, err := readTry(dir, rel, owner, fn)
		if !moved {
			return err
		}
		if try == storeTries {
			return &ledger.Error{File: path, Msg: fmt.Sprintf("written by its gateway during each of %d reads: not used", storeTries)}
		}
		// A gateway writes in bursts (a session's delete, its store's
		// maintenance): the next try waits the burst out, 100 ms, then
		// 200 ms, rather than meet it again at once.
		time.Sleep(time.Duration(try) * storeBackoff)
	}
}

// storeBackoff is the wait before a store's second read; the third waits
// twice as long.
const storeBackoff = 100 * time.Millisecond

// readTry opens the database and its WAL afresh (the gateway may have
// replaced the WAL since the last try), reads, and reports whether the
// files moved under the read.
func readTry(dir, rel string, owner int, fn func(db *DB) error) (moved bool, err error) {
	path := filepath.Join(dir, rel)
	dbf, err := platform.OpenBeneath(dir, rel, owner)
	if err != nil {
		return false, ledger.ReadError(path, err)
	}
	defer dbf.Close()
	walf, err := platform.OpenBeneath(dir, rel+"-wal", owner)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		walf = nil
	case err != nil:
		return false, ledger.ReadError(path+"-wal", err)
	default:
		defer walf.Close()
	}
	before, err := fingerprint(dbf, walf)
	if err != nil {
		return false, &ledger.Error{File: path, Msg: err.Error()}
	}
	if before.walSize > maxWAL {
		return false, &ledger.Error{File: path, Msg: fmt.Sprintf("its WAL is %d bytes, more than %d MiB: not read", before.walSize, maxWAL>>20)}
	}
	err = readOnce(path, dbf, walf, before, fn)
	if errors.Is(err, errNotInTime) {
		return false, err // fn may still run: it must not run again
	}
	after, ferr := fingerprint(dbf, walf)
	return ferr != nil || !after.same(before), err
}

// storePrint is what a checkpoint or a WAL restart changes.
type storePrint struct {
	db      platform.FileStamp
	walSize int64
	walHead [walHeader]byte
}

func fingerprint(dbf, walf *os.File) (storePrint, error) {
	var p storePrint
	var err error
	if p.db, err = platform.Stamp(dbf); err != nil || walf == nil {
		return p, err
	}
	wal, err := platform.Stamp(walf)
	if err != nil {
		return p, err
	}
	p.walSize = wal.Size
	if _, err := walf.ReadAt(p.walHead[:], 0); err != nil && !errors.Is(err, io.EOF) {
		return p, err
	}
	return p, nil
}

// same: no checkpoint wrote the database, and the WAL was neither
// restarted nor cut; frames appended after the read began are not read.
func (p storePrint) same(q storePrint) bool {
	return p.db == q.db && q.walSize >= p.walSize && p.walHead == q.walHead
}

// readOnce runs fn on the database as the fingerprint p saw it.
func readOnce(path string, dbf, walf *os.File, p storePrint, fn func(db *DB) error) error {
	done := make(chan error, 1)
	go func() {
		var wal io.ReaderAt
		if walf != nil {
			wal = walf
		}
		pg, err := openPager(dbf, p.db.Size, wal, p.walSize, time.Now().Add(Timeout))
		if err == nil {
			err = fn(&DB{p: pg})
		}
		if errors.Is(err, errDeadline) {
			err = &ledger.Error{File: path, Msg: fmt.Sprintf("not read within %s: not used", Timeout), Err: errNotInTime}
		}
		done <- err
	}()
	t := time.NewTimer(Timeout + time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return &ledger.Error{File: path, Msg: fmt.Sprintf("not read within %s: not used", Timeout+time.Second), Err: errNotInTime}
	}
}

// errNotInTime: a read given up at its bound, its goroutine left running.
var errNotInTime = errors.New("not read in time")

// DB is one read of a store: its schema, read once, and its tables.
type DB struct {
	p       *pager
	objects []object
	read    bool
}

func (db *DB) schema() ([]object, error) {
	if !db.read {
		objs, err := db.p.readSchema()
		if err != nil {
			return nil, err
		}
		db.objects, db.read = objs, true
	}
	return db.objects, nil
}

// Tables reports which of names the database has as plain tables. A
// view, a virtual table, a table WITHOUT ROWID or with generated columns
// by one of those names is an error: its rows are not records in a table
// b-tree (a view's and a generated column's are SQL its author wrote,
// which reaper never runs). Table names are case-insensitive in SQLite,
// so they are looked up the same way.
func (db *DB) Tables(names ...string) (map[string]bool, error) {
	objs, err := db.schema()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, o := range objs {
		name := strings.ToLower(o.name)
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) }) {
			continue
		}
		if o.typ == "index" || o.typ == "trigger" {
			continue // not what is read; a trigger never fires in a read
		}
		if o.typ != "table" {
			return nil, fmt.Errorf("%s is a %s, not a table: not read", name, o.typ)
		}
		t := parseTable(o.sql)
		switch {
		case t.virtual:
			return nil, fmt.Errorf("%s is a virtual table: not read", name)
		case t.gen:
			return nil, fmt.Errorf("%s has generated columns: not read", name)
		case t.noRowid:
			return nil, fmt.Errorf("%s is a table WITHOUT ROWID: not read", name)
		case t.bad != "":
			return nil, fmt.Errorf("%s: %s: not read", name, t.bad)
		}
		out[name] = true
	}
	return out, nil
}

// Rows calls fn with the columns cols of each row of the table name, in
// rowid order, until fn returns an error or errStop. The values are valid
// until fn returns. A table Tables did not report is an error.
func (db *DB) Rows(name string, cols []string, fn func(row []Value) error) error {
	objs, err := db.schema()
	if err != nil {
		return err
	}
	var t *table
	var root int64
	for _, o := range objs {
		if o.typ == "table" && strings.EqualFold(o.name, name) {
			t, root = parseTable(o.sql), o.root
		}
	}
	if t == nil || t.virtual || t.gen || t.noRowid || t.bad != "" {
		return fmt.Errorf("no table %s reaper can read", name)
	}
	if root <= 0 || root > int64(db.p.pages) {
		return corrupt("%s's root page %d", name, root)
	}
	idx, err := t.columnIndex(name, cols)
	if err != nil {
		return err
	}
	row := make([]Value, len(cols))
	err = db.p.walk(uint32(root), func(rowid int64, rec []byte) error {
		missing, err := decodeRecord(rec, idx, row)
		if err != nil {
			return err
		}
		for j, i := range idx {
			switch {
			case i == t.rowid:
				row[j] = Value{Class: Integer, Int: rowid}
			case missing[j] && t.cols[i].hasDefault:
				// A row written before ALTER TABLE added the column
				// holds no field for it: its value is the DEFAULT's
				// expression, which reaper does not evaluate.
				return fmt.Errorf("%s: a row older than column %s's DEFAULT: not read", name, t.cols[i].name)
			}
		}
		return fn(row)
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// ErrStop, returned by a Rows callback, ends the walk without an error.
var ErrStop = errors.New("stop")
