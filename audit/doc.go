// Package audit turns a run's pass into what the run leaves behind and
// what a person reads: the report on stdout (a table for people, JSON for
// scripts), the JSONL audit log and journald records, the Prometheus
// textfile metrics, history, and the views of explain, pty, ledger show,
// doctor and version; and how a terminal takes them (colour, locale, a
// reap's progress line).
//
// audit writes to the writers and files it is given; it never decides and
// never signals. The JSON report only ever gains fields.
package audit
