package main

import (
	"time"

	"github.com/orphanreaper/reaper/scrape"
)

// listenMetrics is --metrics-listen's endpoint: healthy while a pass
// completed within limit; /metrics wants tokenFile's bearer token when
// one is named. A port alone (":9469", "9469") is loopback's: an endpoint
// other hosts reach is asked for by its address.
func listenMetrics(addr, tokenFile string, limit time.Duration) (*scrape.Server, error) {
	srv, err := scrape.ListenWith(addr, scrape.Options{Limit: limit, TokenFile: tokenFile})
	if err != nil {
		return nil, usagef("--metrics-listen %s: %v", addr, err)
	}
	return srv, nil
}
