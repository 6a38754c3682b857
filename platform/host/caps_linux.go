package host

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/orphanreaper/reaper/platform"
)

// EffectiveCaps is this process's effective capability set (CapEff in
// /proc/self/status, proc(5)), one bit per capability number.
func EffectiveCaps() (uint64, error) {
	b, err := os.ReadFile(platform.DefaultProcRoot + "/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapEff in /proc/self/status")
}
