package main

import (
	"flag"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

func TestMain(m *testing.M) {
	// The integration tests re-execute this test binary as their fake
	// gateways and children (runHelperIfAsked); those never reach the
	// tests.
	clitest.Main(m, clitest.Options{Package: ".", Helpers: runHelperIfAsked})
}
