package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlitelib "modernc.org/sqlite/lib"
	sqlitevfs "modernc.org/sqlite/vfs"

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
// by root, by name, in a directory its user controls. So a store is read
// through modernc's read-only VFS (modernc.org/sqlite/vfs) over an fs.FS
// that serves exactly two descriptors reaper opened itself beneath the
// state dir (platform.OpenBeneath: no link followed, never blocking, a
// regular file of the state's user): the database and its -wal. Without
// shared memory SQLite reads a WAL database only in exclusive locking
// mode, with the WAL index in its own heap (https://www.sqlite.org/wal.html,
// "Use of WAL Without Shared-Memory"): reaper takes no lock the gateway
// could wait on, writes nothing, and sees every transaction committed to
// the WAL when the read began.
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
	// storeName is the one name the VFS serves the database under.
	storeName = "store.sqlite"
)

// Query reads the SQLite database rel below dir, owner's, and runs
// fn on it, each try within Timeout and a second more. fn may run
// more than once (a read the writer's checkpoint overlapped is done
// again), so it must start its results afresh each time. An error wraps
// fs.ErrNotExist when there is no database.
func Query(dir, rel string, owner int, fn func(ctx context.Context, db *sql.DB) error) error {
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
func readTry(dir, rel string, owner int, fn func(ctx context.Context, db *sql.DB) error) (moved bool, err error) {
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
func readOnce(path string, dbf, walf *os.File, p storePrint, fn func(ctx context.Context, db *sql.DB) error) error {
	sfs := &storeFS{db: dbf, dbSize: p.db.Size, wal: walf, walSize: p.walSize}
	name, vfs, err := sqlitevfs.New(sfs)
	if err != nil {
		return &ledger.Error{File: path, Msg: err.Error()}
	}
	done := make(chan error, 1)
	go func() {
		q := url.Values{}
		q.Set("vfs", name)
		q.Set("mode", "ro")
		q.Add("_pragma", "locking_mode(EXCLUSIVE)")
		q.Add("_pragma", "query_only(1)")
		// Sorting and grouping past a page cache's worth spill to a
		// temporary file, which the read-only VFS cannot make ("disk I/O
		// error" at some 40 MB of rows): they are kept in memory, under
		// the child's RLIMIT_DATA.
		q.Add("_pragma", "temp_store(MEMORY)")
		db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Opaque: storeName, RawQuery: q.Encode()}).String())
		if err != nil {
			done <- &ledger.Error{File: path, Msg: err.Error()}
			vfs.Close()
			return
		}
		// One connection, kept: the limits are the connection's.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		ctx, cancel := context.WithTimeout(context.Background(), Timeout)
		if err = limitConn(ctx, db); err == nil {
			err = fn(ctx, db)
		}
		cancel()
		db.Close()
		vfs.Close()
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

// storeFS serves the database and its WAL, as the fingerprint sized them,
// to SQLite's read-only VFS; every other name (a -journal, a -shm) does
// not exist. A database with no WAL file (its gateway closed it cleanly)
// gets an empty one, which holds no frame: SQLite opens the WAL of a
// WAL-mode database before its first read and, read-only, can't create it.
type storeFS struct {
	db, wal         *os.File
	dbSize, walSize int64
}

func (s *storeFS) Open(name string) (fs.File, error) {
	switch name {
	case storeName:
		return &storeFile{io.NewSectionReader(s.db, 0, s.dbSize), name}, nil
	case storeName + "-wal":
		if s.wal == nil {
			return &storeFile{io.NewSectionReader(bytes.NewReader(nil), 0, 0), name}, nil
		}
		return &storeFile{io.NewSectionReader(s.wal, 0, s.walSize), name}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// storeFile reads through its section; closing it leaves the descriptor
// to Query.
type storeFile struct {
	*io.SectionReader
	name string
}

func (f *storeFile) Stat() (fs.FileInfo, error) { return storeInfo{f}, nil }
func (f *storeFile) Close() error               { return nil }

type storeInfo struct{ f *storeFile }

func (i storeInfo) Name() string       { return i.f.name }
func (i storeInfo) Size() int64        { return i.f.Size() }
func (i storeInfo) Mode() fs.FileMode  { return 0o444 }
func (i storeInfo) ModTime() time.Time { return time.Time{} }
func (i storeInfo) IsDir() bool        { return false }
func (i storeInfo) Sys() any           { return nil }

// Tables reports which of names the database has as plain tables, in one
// query. A view, a virtual table or a table with generated columns by one
// of those names is an error: reading it runs SQL the file's author wrote
// (a view over an endless recursive CTE, a VIRTUAL column of
// printf('%.*c', 2e8, …)), which costs what its author wants. Table names
// are case-insensitive in SQLite, so they are looked up the same way; a
// table's hidden columns are counted only for a table (the CASE is lazy),
// never by compiling a view.
func Tables(ctx context.Context, db *sql.DB, names ...string) (map[string]bool, error) {
	args := make([]any, len(names))
	marks := make([]string, len(names))
	for i, n := range names {
		args[i], marks[i] = n, "?"
	}
	// hidden: 1 a virtual table's hidden column, 2 a VIRTUAL and 3 a
	// STORED generated column (https://www.sqlite.org/pragma.html#pragma_table_xinfo).
	rows, err := db.QueryContext(ctx, `SELECT lower(name), type, coalesce(sql, ''),
		CASE WHEN type = 'table' THEN (SELECT count(*) FROM pragma_table_xinfo(s.name) WHERE hidden != 0) ELSE 0 END
		FROM sqlite_schema AS s WHERE name COLLATE NOCASE IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name, typ, text string
		var generated int
		if err := rows.Scan(&name, &typ, &text, &generated); err != nil {
			return nil, err
		}
		switch {
		case typ == "index" || typ == "trigger":
			continue // not what is read; a trigger never fires in a read
		case typ != "table":
			return nil, fmt.Errorf("%s is a %s, not a table: not read", name, typ)
		case virtualTable.MatchString(text):
			return nil, fmt.Errorf("%s is a virtual table: not read", name)
		case generated > 0:
			return nil, fmt.Errorf("%s has generated columns: not read", name)
		}
		out[name] = true
	}
	return out, rows.Err()
}

// virtualTable matches the SQL of a virtual table, which sqlite_schema
// lists with type "table".
var virtualTable = regexp.MustCompile(`(?i)^\s*CREATE\s+VIRTUAL\s`)

// storeLimits are set on the connection before its first statement, so
// that they hold while SQLite parses the schema too
// (https://www.sqlite.org/c3ref/limit.html, https://www.sqlite.org/security.html):
// no string or blob longer than 4 MiB is made (reaper takes at most 64 KiB
// of any value; a stored value longer than the limit fails the read, so it
// is far above what an OpenClaw row holds), no schema statement longer
// than 256 KiB is parsed, nothing is attached, no trigger runs, no worker
// thread starts. The child's RLIMIT_DATA bounds what is left.
var storeLimits = [][2]int{
	{sqlitelib.SQLITE_LIMIT_LENGTH, 4 << 20},
	{sqlitelib.SQLITE_LIMIT_SQL_LENGTH, 256 << 10},
	{sqlitelib.SQLITE_LIMIT_ATTACHED, 0},
	{sqlitelib.SQLITE_LIMIT_TRIGGER_DEPTH, 1},
	{sqlitelib.SQLITE_LIMIT_WORKER_THREADS, 0},
}

// limitConn sets storeLimits on the one connection db keeps.
func limitConn(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close() // back to the pool, as its one idle connection
	for _, l := range storeLimits {
		if _, err := sqlite.Limit(conn, l[0], l[1]); err != nil {
			return err
		}
	}
	return nil
}
