//go:build unix

package clienttest

import "syscall"

// mkfifo puts a FIFO at p, as a user can where a client's file is.
func mkfifo(p string) error { return syscall.Mkfifo(p, 0o644) }
