// Package clitest is the harness of the test packages that run the real
// reaper binary (cmd/reaper's, and the real clients' suites of
// cmd/reaper/realclients): Main builds the binary once per package and
// gives the suite its own HOME and XDG dirs, a supervisor that ends what
// the suite left however it ends, orphans no test started (the
// sentinels, which must outlive it) and the mark every test rule is
// confined to; RunReaper runs the binary; the rest reads the processes
// the tests start, and the reports the binary prints.
package clitest
