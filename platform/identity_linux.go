package platform

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

func startIdentity(pid int) (string, error) {
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

func pIDNamespace() string {
	ns, err := os.Readlink(DefaultProcRoot + "/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}

func machineID() string {
	id, err := os.ReadFile("/etc/machine-id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(id))
}
