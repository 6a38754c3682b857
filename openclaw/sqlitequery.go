package openclaw

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"github.com/orphanreaper/reaper/ledger"
)

// queryBounded opens the SQLite database at path read-only and runs fn on
// it, all within sqliteTimeout and a second more: the database is opened
// by name after the caller checked it (platform.CheckBeneath), and a user
// who swaps it for a FIFO in between makes that open block, so the work
// runs on its own goroutine and is given up at the bound (a blocked
// goroutine ends with the process). Read-only and query-only: in WAL mode
// a reader neither blocks the gateway's writes nor is blocked by them, and
// sees the last committed state, WAL included.
func queryBounded(path string, fn func(ctx context.Context, db *sql.DB) error) error {
	done := make(chan error, 1)
	go func() {
		q := url.Values{}
		q.Set("mode", "ro")
		q.Add("_pragma", "busy_timeout(250)")
		q.Add("_pragma", "query_only(1)")
		db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}).String())
		if err != nil {
			done <- &ledger.Error{File: path, Msg: err.Error()}
			return
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		ctx, cancel := context.WithTimeout(context.Background(), sqliteTimeout)
		defer cancel()
		done <- fn(ctx, db)
	}()
	t := time.NewTimer(sqliteTimeout + time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return &ledger.Error{File: path, Msg: fmt.Sprintf("not read within %s (replaced while being opened, or held by another process): not used", sqliteTimeout+time.Second)}
	}
}

// hasTable reports whether the database has the table.
func hasTable(ctx context.Context, db *sql.DB, name string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}
