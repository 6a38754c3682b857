// Package audit turns a run's plan into what the run leaves behind: the
// report on stdout (a table for people, JSON for scripts), the JSONL audit
// log, and the Prometheus textfile metrics.
//
// audit writes to the writers and files it is given; it never decides and
// never signals. The JSON report only ever gains fields.
package audit
