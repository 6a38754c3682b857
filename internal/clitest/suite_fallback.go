//go:build !linux

package clitest

// SuperviseIfFirst: nothing here adopts, so nothing is left to end.
func SuperviseIfFirst() {}

// StartSentinels: the reaping tests are Linux only.
func StartSentinels() error { return nil }

// SetMark: nothing here reaps.
func SetMark() {}

// CheckSentinels: there are none here.
func CheckSentinels() []string { return nil }

// EndLeftHelpers: nothing here adopts.
func EndLeftHelpers() {}

// RunSpecIfAsked: the helpers are Linux only.
func RunSpecIfAsked() {}
