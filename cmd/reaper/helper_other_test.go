//go:build !linux

package main

// runHelperIfAsked has nothing to run where the integration tests don't.
func runHelperIfAsked() { runReaderIfAsked() }
