//go:build unix

package clienttest

import "syscall"

// mkfifo puts a FIFO at p, as a user can where a client's file is.
func mkfifo(p string) error { return Mkfifo(p, 0o644) }

// Mkfifo puts a FIFO at p with mode (before the umask): what a test
// plants where reaper must not block.
func Mkfifo(p string, mode uint32) error { return syscall.Mkfifo(p, mode) }
