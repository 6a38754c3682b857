// Package setup writes what reaper installs outside itself, and names it
// for doctor: the background service — systemd units and launchd plists,
// whose names and labels are one list here that `reaper service` writes
// and doctor asks the service manager about — and the session-start hooks
// in agent clients' settings files, edited so that every byte the user
// wrote stays as it was (settings.go; its fuzz target holds the editor to
// it). Every file is written through platform.WriteFileAtomic.
//
// setup decides nothing about processes: it reads no process table and
// sends no signal. cmd maps flags to Service and Hook and prints what they
// did.
package setup
