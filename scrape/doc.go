// Package scrape serves a watch's metrics over HTTP (--metrics-listen):
// /metrics, the series the node_exporter textfile holds, renewed on every
// pass, with the Prometheus client library's exposition (text, OpenMetrics
// or protobuf, as the scraper asks) and the reaper process's own Go and
// process series; /healthz, 200 while passes complete, 503 once the last
// is older than its limit. For a pod, where there is no node to write a
// textfile to.
package scrape
