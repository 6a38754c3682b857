// Package sqlitetest writes SQLite databases for the tests, as the clients
// hold theirs: WAL mode, no automatic checkpoint.
package sqlitetest
