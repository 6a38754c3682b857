// Package policy loads reaper's TOML policy (format v1, docs/policy.md), validates
// it strictly — every error names the file and line — and turns scan
// findings into a plan: which rule each finding matches, what action that
// rule asks for, and whether a safety rule refuses it.
//
// policy never reads the process table and never signals; it decides.
package policy
