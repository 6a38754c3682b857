//go:build !linux && !darwin

package gather

// accounts lists the accounts whose homes may hold state: /etc/passwd.
func accounts() []account { return passwd("/etc/passwd") }
