package platform

import (
	"bytes"
	"fmt"
	"os"
	"strings"
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

// PIDNamespace names this process's PID namespace as the kernel links it,
// "pid:[<inode>]" (namespaces(7)); "" where it cannot be read.
func PIDNamespace() string {
	ns, err := os.Readlink(DefaultProcRoot + "/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}

// MachineID is this machine's id, machine-id(5); "" where it has none.
func MachineID() string {
	id, err := os.ReadFile("/etc/machine-id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(id))
}
