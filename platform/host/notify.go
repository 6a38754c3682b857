package host

import (
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Notify sends state to the service manager (sd_notify(3): READY=1,
// STATUS=…, WATCHDOG=1, STOPPING=1), when the unit is Type=notify and
// NOTIFY_SOCKET names its socket; it reports whether it was sent.
func Notify(state string) (bool, error) { return daemon.SdNotify(false, state) }

// WatchdogInterval is how often the service manager wants WATCHDOG=1 (half
// of the unit's WatchdogSec, as sd_watchdog_enabled(3) advises), or 0 when
// it wants none.
func WatchdogInterval() time.Duration {
	d, err := daemon.SdWatchdogEnabled(false)
	if err != nil || d <= 0 {
		return 0
	}
	return d / 2
}
