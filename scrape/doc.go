// Package scrape serves a watch's metrics over HTTP (--metrics-listen):
// /metrics, the series the node_exporter textfile holds, renewed on every
// pass, in the Prometheus text format, with the reaper process's own Go
// and process series (own.go, read only when asked for); /healthz, 200
// while passes complete, 503 once the last is older than its limit. For a
// pod, where there is no node to write a textfile to.
package scrape
