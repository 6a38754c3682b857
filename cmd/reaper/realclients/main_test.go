//go:build linux

package realclients

import (
	"os"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// The real clients' suites run the binary of cmd/reaper, built once here
// (clitest.Main); without an install of the clients named (the
// environment's REAPER_*_DIR, scripts/install-*.sh), every test skips and
// nothing is built.
func TestMain(m *testing.M) {
	clitest.Main(m, clitest.Options{Package: "..", Needed: func() bool {
		return os.Getenv(envClients) != "" || os.Getenv(envOpenClaw) != "" || os.Getenv(envMCPSDK) != ""
	}})
}
