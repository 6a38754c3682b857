package platform

import (
	"bytes"
	"fmt"
	"os"
)

// StartIdentity returns the start identity of the live process pid,
// "<boot_id>:<starttime>": what a supervisor writes into its ledger right
// after spawning a child, and what the reaper compares before believing a
// ledger's pid.
func StartIdentity(pid int) (string, error) {
	boot, err := os.ReadFile(DefaultProcRoot + "/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("start identity of %d: %w", pid, err)
	}
	stat, err := os.ReadFile(ProcPath(pid, "stat"))
	if err != nil {
		return "", fmt.Errorf("start identity of %d: %w", pid, err)
	}
	var p Process
	if err := ParseStat(stat, 1, &p); err != nil {
		return "", fmt.Errorf("start identity of %d: %w", pid, err)
	}
	return FormatIdentity(string(bytes.TrimSpace(boot)), p.StartTicks), nil
}
