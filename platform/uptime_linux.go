package platform

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// parseUptime parses /proc/uptime: "SECONDS.FRACTION IDLE".
func parseUptime(b []byte) (time.Duration, error) {
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0, fmt.Errorf("uptime %q: %w", b, ErrMalformed)
	}
	secs, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil || secs < 0 {
		return 0, fmt.Errorf("uptime %q: %w", f[0], ErrMalformed)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
