// Package top is `reaper top`: the ps view (run.Pass.PS), live in the
// terminal, on Bubble Tea (github.com/charmbracelet/bubbletea) — its
// screen, its keys, its raw mode and the alternate screen, and the
// terminal given back on every way out: q, Ctrl-C, SIGTERM (a QuitMsg)
// and a panic (Bubble Tea catches it and restores the terminal first).
//
// It reads through a Source, each call a pass of its own; it signals
// only through Source.End, which is reap's path confined to one finding:
// its dry-run is shown first, and the act waits for a "y".
package top
