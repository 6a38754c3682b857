package sqlitetest

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite" // the driver the product reads with
)

// OpenWAL opens (creates) a WAL-mode database as a client holds it, with
// schema run in it; closed when the test ends.
func OpenWAL(t testing.TB, path string, schema ...string) *sql.DB {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	u := url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)"} // a fuzz seed's dir holds '#'
	db, err := sql.Open("sqlite", u.String())
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
