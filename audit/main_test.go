package audit

import (
	"os"
	"testing"

	"github.com/orphanreaper/reaper/internal/skips"
)

// TestMain says at the end what was skipped, and why (internal/skips).
func TestMain(m *testing.M) { os.Exit(skips.Main(m)) }
