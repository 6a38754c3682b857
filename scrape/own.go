package scrape

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/platform"
)

// writeOwn writes the process's own go_* and process_* series, each
// family with its HELP and TYPE, in the names the Prometheus Go client
// uses. They are read only when /metrics is asked for: nothing of theirs
// runs at package initialisation or in a process that serves no metrics
// (a metrics library's init read the cgroup and PSI files in every
// reaper process). A process series the OS does not say cheaply (a
// Mac's resident memory without cgo) is left out, never written as 0.
func writeOwn(w *bytes.Buffer) {
	family := func(name, typ, help string) {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	gauge := func(name, help string, v float64) {
		family(name, "gauge", help)
		fmt.Fprintf(w, "%s %s\n", name, strconv.FormatFloat(v, 'f', -1, 64))
	}
	counter := func(name, help string, v float64) {
		family(name, "counter", help)
		fmt.Fprintf(w, "%s %s\n", name, strconv.FormatFloat(v, 'f', -1, 64))
	}
	family("go_info", "gauge", "The Go version reaper was built with.")
	fmt.Fprintf(w, "go_info{version=\"%s\"} 1\n", audit.Label(runtime.Version()))
	gauge("go_goroutines", "Goroutines that exist now.", float64(runtime.NumGoroutine()))
	threads, _ := runtime.ThreadCreateProfile(nil)
	gauge("go_threads", "OS threads the Go runtime created.", float64(threads))
	gauge("go_gomaxprocs", "The goroutines that may run at once (GOMAXPROCS).", float64(runtime.GOMAXPROCS(0)))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gauge("go_memstats_alloc_bytes", "Bytes of heap objects allocated and not yet freed.", float64(ms.Alloc))
	counter("go_memstats_alloc_bytes_total", "Bytes of heap objects allocated, ever.", float64(ms.TotalAlloc))
	gauge("go_memstats_heap_inuse_bytes", "Bytes in heap spans in use.", float64(ms.HeapInuse))
	gauge("go_memstats_heap_objects", "Heap objects allocated and not yet freed.", float64(ms.HeapObjects))
	gauge("go_memstats_sys_bytes", "Bytes the Go runtime obtained from the OS.", float64(ms.Sys))
	gauge("go_memstats_next_gc_bytes", "The heap size at which the next collection starts.", float64(ms.NextGC))
	counter("go_gc_cycles_total", "Garbage collections completed.", float64(ms.NumGC))
	counter("go_gc_pause_seconds_total", "Seconds the world was stopped for collections.", float64(ms.PauseTotalNs)/1e9)

	u, err := platform.ReadOwnUsage()
	if err != nil {
		fmt.Fprintf(w, "# reaper: the process's own usage was not read: %s\n", audit.Label(err.Error()))
		return
	}
	counter("process_cpu_seconds_total", "User and system CPU seconds the reaper process spent.", u.CPUSeconds)
	for _, s := range []struct {
		name, help string
		v          float64
	}{
		{"process_resident_memory_bytes", "Resident memory of the reaper process, bytes.", float64(u.RSS)},
		{"process_resident_memory_peak_bytes", "The most resident memory of the reaper process so far, bytes.", float64(u.PeakRSS)},
		{"process_virtual_memory_bytes", "Virtual memory of the reaper process (Windows: private bytes).", float64(u.Virtual)},
		{"process_start_time_seconds", "Unix time the reaper process started.", float64(startSeconds(u))},
		{"process_open_fds", "Descriptors (Windows: handles) the reaper process holds open.", float64(u.OpenFDs)},
		{"process_max_fds", "The soft limit of the reaper process's open descriptors.", float64(u.MaxFDs)},
	} {
		if s.v > 0 {
			gauge(s.name, s.help, s.v)
		}
	}
}

// startSeconds is u's start as Unix seconds, 0 where it was not read.
func startSeconds(u platform.OwnUsage) int64 {
	if u.Start.IsZero() {
		return 0
	}
	return u.Start.Unix()
}
