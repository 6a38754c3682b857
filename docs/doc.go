// Package docs holds the long help of reaper's commands, as text files
// beside the rest of its documentation (help/NAME.txt), embedded in the
// binary: cmd/reaper names a command's file, and the man pages are made
// from the same text.
package docs
