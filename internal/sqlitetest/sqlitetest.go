package sqlitetest

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the driver the product reads with
)

// URI is the SQLite file: URI of path, with the query q: escaped (a fuzz
// seed's dir holds '#'), and on Windows the drive after a slash
// (file:///C:/dir/store.sqlite), as SQLite's URIs spell a Windows path.
func URI(path, q string) string {
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p, RawQuery: q}).String()
}

// OpenWAL opens (creates) a WAL-mode database as a client holds it, with
// schema run in it; closed when the test ends.
func OpenWAL(t testing.TB, path string, schema ...string) *sql.DB {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	db, err := sql.Open("sqlite", URI(path, "_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	for _, q := range schema {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db
}

// Insert runs q, failing the test on an error.
func Insert(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
