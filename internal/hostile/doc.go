// Package hostile is the one set of strings a user can put anywhere
// reaper hands out — escapes, bytes that are not UTF-8, a 64 KiB name,
// secrets in each form — and the check every sink's test makes of what
// the sink wrote with them. Test support: no product code imports it.
package hostile
