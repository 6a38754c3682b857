// Package paths is where reaper keeps its files — the lock and what sits
// beside it, the policy read when none is named, the audit logs, the
// service's log dir — made once from the user and the environment
// (Current, or New from an Env a test builds). No other package spells one
// of these paths: a port to another OS changes this package alone
// (tailscale's paths package is the model).
package paths
