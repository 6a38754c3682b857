// Package policy loads reaper's TOML policy (format v1, docs/policy.md), validates
// it strictly — every error names the file and line — and turns scan
// findings into a plan in two pure steps: MatchAll gives each finding its
// rule, and Decide, once run has asked who writes to the matched trees'
// stdin, says what action each rule asks for and whether a safety rule
// refuses it.
//
// policy reads no process table, does no I/O on processes and never
// signals; it decides from what the table already holds (run loads the
// findings' details first, and its tests count the reads around these
// two). A uid's name for a message is looked up in the host's user
// database, the one lookup it makes.
package policy
