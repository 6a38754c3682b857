// Package packaging holds the service files reaper ships — the systemd
// units, system and user, and the launchd plists — for `reaper service
// install` to write with the binary's own path, as the packages install
// them with /usr/bin/reaper; and the example policy, for `reaper policy
// show --example`.
package packaging
