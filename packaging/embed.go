package packaging

import "embed"

// Files are the units and plists, by their path below packaging/.
//
//go:embed systemd/*.service systemd/*.timer systemd/user/*.service systemd/user/*.timer launchd/*.plist policy.example.toml
var Files embed.FS
