package sqlitestore

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/sqlitetest"
	"github.com/orphanreaper/reaper/platform"
)

// readAll reads every row of table's cols through reaper's reader, each
// value printed as a test compares it.
func readAll(t *testing.T, dir, table string, cols []string) ([]string, error) {
	t.Helper()
	var out []string
	err := Query(dir, "store.sqlite", platform.AnyOwner, func(db *DB) error {
		out = out[:0]
		return db.Rows(table, cols, func(row []Value) error {
			out = append(out, showRow(row))
			return nil
		})
	})
	return out, err
}

func showRow(row []Value) string {
	var b strings.Builder
	for _, v := range row {
		switch v.Class {
		case Null:
			b.WriteString("NULL")
		case Integer:
			fmt.Fprintf(&b, "i%d", v.Int)
		case Float:
			fmt.Fprintf(&b, "f%v", v.Float)
		case Text:
			fmt.Fprintf(&b, "t%q", v.Bytes)
		case Blob:
			fmt.Fprintf(&b, "b%x", v.Bytes)
		}
		b.WriteByte('|')
	}
	return b.String()
}

// sqliteAll is what SQLite itself reads of the same rows, in rowid order.
func sqliteAll(t *testing.T, db *sql.DB, table string, cols []string) []string {
	t.Helper()
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = `"` + c + `"`
	}
	rows, err := db.Query(`SELECT ` + strings.Join(q, ", ") + ` FROM ` + table + ` ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]Value, len(cols))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
			case int64:
				row[i] = Value{Class: Integer, Int: v}
			case float64:
				row[i] = Value{Class: Float, Float: v}
			case string:
				row[i] = Value{Class: Text, Bytes: []byte(v)}
			case []byte:
				row[i] = Value{Class: Blob, Bytes: v}
			default:
				t.Fatalf("%T", v)
			}
		}
		out = append(out, showRow(row))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReaderMatchesSQLite: reaper's reader sees exactly the rows SQLite
// sees — every integer width, floats, NULLs, text and blobs on their page
// and spilling onto overflow chains, trees several levels deep, deleted
// rows' free space, a rowid column, quoted names, a column added later —
// at the smallest, the usual and the largest page size, with the newest
// transactions only in the WAL.
func TestReaderMatchesSQLite(t *testing.T) {
	// What is compared is the rows, not the time: the 512-byte pages'
	// overflow chains are some 10^5 reads, seconds under wine.
	old := Timeout
	Timeout = time.Minute
	t.Cleanup(func() { Timeout = old })
	for _, pageSize := range []int{512, 4096, 65536} {
		t.Run(fmt.Sprint(pageSize), func(t *testing.T) {
			dir := t.TempDir()
			w := openSized(t, filepath.Join(dir, "store.sqlite"), pageSize)
			sqlitetest.Insert(t, w, `CREATE TABLE "odd ""name""" (id INTEGER PRIMARY KEY, [a b] TEXT, `+"`c`"+` BLOB, d, e REAL NOT NULL DEFAULT 0)`)
			r := rand.New(rand.NewPCG(1, uint64(pageSize)))
			ints := []int64{0, 1, -1, 127, 128, -129, 32767, -32769, 1 << 23, -(1 << 23) - 1, 1 << 31, -(1 << 31) - 1, 1 << 47, -(1 << 47) - 1, math.MaxInt64, math.MinInt64}
			insert := func(n int) {
				tx, err := w.Begin()
				if err != nil {
					t.Fatal(err)
				}
				for range n {
					var d any
					switch r.IntN(5) {
					case 0:
						d = ints[r.IntN(len(ints))]
					case 1:
						d = r.Float64() * 1e6
					case 2:
						d = strings.Repeat("é", r.IntN(3*pageSize))
					case 3:
						d = bytes.Repeat([]byte{byte(r.IntN(256))}, r.IntN(70000))
					}
					if _, err := tx.Exec(`INSERT INTO "odd ""name""" ([a b], c, d, e) VALUES (?, ?, ?, ?)`,
						strings.Repeat("x", r.IntN(pageSize)), bytes.Repeat([]byte{7}, r.IntN(40)), d, r.Float64()); err != nil {
						t.Fatal(err)
					}
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
			}
			insert(1500 + 4000*(512/pageSize))
			if _, err := w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
				t.Fatal(err)
			}
			sqlitetest.Insert(t, w, `DELETE FROM "odd ""name""" WHERE id % 3 = 0`)
			sqlitetest.Insert(t, w, `ALTER TABLE "odd ""name""" ADD COLUMN f TEXT`)
			insert(300) // in the WAL only
			cols := []string{"id", "a b", "c", "d", "e", "f"}
			want := sqliteAll(t, w, `"odd ""name"""`, cols)
			got, err := readAll(t, dir, `odd "name"`, cols)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(want) < 1000 {
				t.Fatalf("%d rows, SQLite reads %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("row %d:\n%.300s\nSQLite reads\n%.300s", i, got[i], want[i])
				}
			}
			var depth int
			Query(dir, "store.sqlite", platform.AnyOwner, func(db *DB) error {
				depth = treeDepth(t, db)
				return nil
			})
			if pageSize == 512 && depth < 3 {
				t.Errorf("a tree %d deep: the interior pages are not tested", depth)
			}
		})
	}
}

// openSized opens a new WAL-mode database of pages of size bytes: the
// size is set before the WAL, which fixes it.
func openSized(t *testing.T, path string, size int) *sql.DB {
	t.Helper()
	w, err := sql.Open("sqlite", sqlitetest.URI(path, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	w.SetMaxOpenConns(1)
	for _, q := range []string{fmt.Sprintf("PRAGMA page_size = %d", size), "VACUUM", "PRAGMA journal_mode = WAL", "PRAGMA wal_autocheckpoint = 0"} {
		sqlitetest.Insert(t, w, q)
	}
	var got int
	if err := w.QueryRow(`PRAGMA page_size`).Scan(&got); err != nil || got != size {
		t.Fatalf("page size %d, want %d: %v", got, size, err)
	}
	return w
}

// treeDepth is the depth of the first table's b-tree.
func treeDepth(t *testing.T, db *DB) int {
	objs, err := db.schema()
	if err != nil || len(objs) == 0 {
		t.Fatal(err)
	}
	n, d := uint32(objs[0].root), 1
	for {
		b, err := db.p.page(n)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != tableInterior {
			return d
		}
		n, d = binary.BigEndian.Uint32(b[8:]), d+1
	}
}

// TestReaderDefaultAddedLater: a row written before ALTER TABLE added a
// column with a DEFAULT holds no field for it; reaper does not evaluate
// the DEFAULT, so the read fails rather than show NULL. The control: the
// same column added without a DEFAULT reads as NULL, as SQLite reads it.
func TestReaderDefaultAddedLater(t *testing.T) {
	for _, def := range []string{"", " DEFAULT 'x'"} {
		dir := t.TempDir()
		sqlitetest.OpenWAL(t, filepath.Join(dir, "store.sqlite"), `CREATE TABLE t (v TEXT)`, `INSERT INTO t VALUES ('a')`,
			`ALTER TABLE t ADD COLUMN s TEXT`+def)
		got, err := readAll(t, dir, "t", []string{"v", "s"})
		if def == "" && (err != nil || len(got) != 1 || got[0] != `t"a"|NULL|`) {
			t.Errorf("no DEFAULT: %q, %v", got, err)
		}
		if def != "" && (err == nil || !strings.Contains(err.Error(), "DEFAULT")) {
			t.Errorf("%s: %q, %v; want the read refused", def, got, err)
		}
	}
}

// TestReaderRefusesWhatItCannotRead: a view, a virtual table, a table
// WITHOUT ROWID or with a generated column is refused by name; the
// control, a plain table beside them, reads.
func TestReaderRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	sqlitetest.OpenWAL(t, filepath.Join(dir, "store.sqlite"),
		`CREATE TABLE plain (v TEXT)`,
		`CREATE VIEW aview AS SELECT v FROM plain`,
		`CREATE VIRTUAL TABLE vt USING fts5(v)`,
		`CREATE TABLE norowid (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID`,
		`CREATE TABLE gen (v TEXT, g TEXT GENERATED ALWAYS AS (upper(v)) VIRTUAL)`)
	for name, want := range map[string]string{"aview": "is a view", "vt": "virtual table", "norowid": "WITHOUT ROWID", "gen": "generated columns", "plain": ""} {
		err := Query(dir, "store.sqlite", platform.AnyOwner, func(db *DB) error {
			have, err := db.Tables(name)
			if err == nil && !have[name] {
				return fmt.Errorf("not found")
			}
			return err
		})
		if (want == "") != (err == nil) || (want != "" && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}

// TestReaderCorruptFiles: a user's store can hold any bytes. Each of
// a thousand copies of a database, a few of its bytes changed at
// random, is read to its end or refused — never a panic, never a loop (a
// read that runs to its deadline, a minute here, is taken for one) — and
// a b-tree whose page points back at itself is refused by name. The
// control reads the unchanged file.
func TestReaderCorruptFiles(t *testing.T) {
	const corruptCopies = 1000
	old := Timeout
	Timeout = time.Minute
	t.Cleanup(func() { Timeout = old })
	dir := t.TempDir()
	path := filepath.Join(dir, "store.sqlite")
	w := openSized(t, path, 512)
	sqlitetest.Insert(t, w, `CREATE TABLE t (v TEXT, b BLOB)`)
	for i := range 200 {
		sqlitetest.Insert(t, w, `INSERT INTO t VALUES (?, ?)`, strings.Repeat("v", i*7), bytes.Repeat([]byte{1}, i*13))
	}
	if _, err := w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := readAll(t, dir, "t", []string{"v", "b"}); err != nil || len(rows) != 200 {
		t.Fatalf("control: %d rows, %v", len(rows), err)
	}
	r := rand.New(rand.NewPCG(2, 3))
	bad := make([]byte, len(good))
	refused := 0
	for i := range corruptCopies {
		copy(bad, good)
		for range 1 + r.IntN(4) {
			bad[r.IntN(len(bad))] = byte(r.IntN(256))
		}
		if i%2 == 0 { // on the b-tree's pages' headers, where a change matters most
			off := 512*r.IntN(len(bad)/512) + r.IntN(12)
			if off < len(bad) {
				bad[off] = byte(r.IntN(256))
			}
		}
		if err := os.WriteFile(path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := readAll(t, dir, "t", []string{"v", "b"})
		if errors.Is(err, errNotInTime) {
			t.Fatalf("copy %d read to its deadline, a loop: %v", i, err)
		}
		if err != nil {
			refused++
		}
	}
	t.Logf("%d of %d corrupt copies refused", refused, corruptCopies)
	if refused == 0 {
		t.Errorf("no corrupt copy refused: the changes did not reach the tree")
	}

	// A root page that is an interior page whose right child is itself.
	copy(bad, good)
	root := 512 // page 2, the table's root
	bad[root] = tableInterior
	binary.BigEndian.PutUint16(bad[root+3:], 0)
	binary.BigEndian.PutUint32(bad[root+8:], 2)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, dir, "t", []string{"v"}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a page that is its own child: %v", err)
	}
}

// TestValueAsSQL: values read as the queries they replace read them —
// substr's characters, not bytes; numbers as text; = on text only.
func TestValueAsSQL(t *testing.T) {
	v := Value{Class: Text, Bytes: []byte("héllo")}
	if s, ok := v.String(2); !ok || s != "hé" {
		t.Errorf("substr(héllo, 1, 2) = %q", s)
	}
	if s, _ := (Value{Class: Integer, Int: -12}).String(9); s != "-12" {
		t.Errorf("-12 as text: %q", s)
	}
	if _, ok := (Value{}).String(9); ok {
		t.Errorf("NULL read as a string")
	}
	if !v.Is("héllo") || (Value{Class: Blob, Bytes: []byte("héllo")}).Is("héllo") {
		t.Errorf("= on text")
	}
	if n, ok := (Value{Class: Text, Bytes: []byte("42")}).Int64(); !ok || n != 42 {
		t.Errorf("'42' as an integer: %d %v", n, ok)
	}
	if _, ok := (Value{Class: Float, Float: 1.5}).Int64(); ok {
		t.Errorf("1.5 read as an integer")
	}
}

// TestTop: the n least of a shuffled run, in order, with n larger and
// smaller than the run; the control is a full sort.
func TestTop(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	for _, n := range []int{0, 1, 7, 100, 1000} {
		vals := r.Perm(300)
		top := NewTop(n, func(a, b int) int { return a - b })
		for _, v := range vals {
			top.Add(v)
		}
		got := top.Sorted()
		want := min(n, 300)
		if len(got) != want {
			t.Fatalf("n=%d: %d kept", n, len(got))
		}
		for i, v := range got {
			if v != i {
				t.Fatalf("n=%d: %v", n, got)
			}
		}
	}
}

// FuzzReader: any bytes as a database and its WAL are read to their end
// or refused — never a panic, never a loop. The seeds are a small store
// with rows on overflow pages and the WAL a writer left.
func FuzzReader(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.sqlite")
	w := sqlitetest.OpenWAL(f, path, `CREATE TABLE t (v TEXT, b BLOB)`)
	for i := range 8 {
		sqlitetest.Insert(f, w, `INSERT INTO t VALUES (?, ?)`, strings.Repeat("v", i*900), bytes.Repeat([]byte{byte(i)}, i*300))
	}
	db, _ := os.ReadFile(path)
	wal, _ := os.ReadFile(path + "-wal")
	f.Add(db, wal)
	f.Add(db, []byte(nil))
	f.Add([]byte(nil), wal)
	f.Fuzz(func(t *testing.T, db, wal []byte) {
		p, err := openPager(bytes.NewReader(db), int64(len(db)), bytes.NewReader(wal), int64(len(wal)), time.Now().Add(time.Minute))
		if err != nil {
			return
		}
		d := &DB{p: p}
		objs, err := d.schema()
		if err != nil {
			return
		}
		for _, o := range objs {
			if have, err := d.Tables(o.name); err == nil && have[strings.ToLower(o.name)] {
				t := parseTable(o.sql)
				cols := make([]string, len(t.cols))
				for i, c := range t.cols {
					cols[i] = c.name
				}
				d.Rows(o.name, cols, func([]Value) error { return nil })
			}
		}
	})
}
