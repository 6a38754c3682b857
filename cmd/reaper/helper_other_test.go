//go:build !linux

package main

// runHelperIfAsked has nothing to run where the integration tests don't.
func runHelperIfAsked() { runReaderIfAsked() }

// superviseIfFirst: nothing here adopts, so nothing is left to end.
func superviseIfFirst() {}

// startSentinels: the reaping tests are Linux only.
func startSentinels() error { return nil }

// setMark: nothing here reaps.
func setMark() {}

// checkSentinels: there are none here.
func checkSentinels() []string { return nil }

// endLeftHelpers: nothing here adopts.
func endLeftHelpers() {}
