// Package signals names the signals reaper catches, as os/signal takes
// them, and their exit statuses: cmd and run ask here, so that only
// platform knows what the system calls a signal.
package signals
