//go:build unix && !linux

package platform

// aclWriter reads no ACL here: macOS keeps its ACLs out of the extended
// attributes, and reading them takes acl_get_file(3) from libSystem,
// which x/sys does not wrap. Mode bits and owners are what is checked on
// these systems (docs/safety.md says so).
func aclWriter(string) (string, error) { return "", nil }
