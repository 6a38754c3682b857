package gather

// accounts lists the accounts whose homes may hold state. macOS keeps
// users in Directory Services; /etc/passwd has only root and the system
// accounts. The homes under /Users, each owned by its account, stand for
// the rest (reaper does not shell out to dscl to read state).
func accounts() []account { return append(passwd("/etc/passwd"), dirAccounts("/Users")...) }
