package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Server is one endpoint. Publish gives it each pass's metrics; until
// the first, /metrics serves the process's own series alone.
type Server struct {
	ln  net.Listener
	srv *http.Server
	// limit is how old the last pass may be before /healthz fails.
	limit time.Duration

	mu      sync.Mutex
	text    []byte
	beat    time.Time
	started time.Time
}

// Listen listens on addr (host:port; port 0 picks one: Addr says which).
// limit is the oldest a last pass may be and the endpoint healthy: a
// watch's backstop and its pass's timeout, with room.
func Listen(addr string, limit time.Duration) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, limit: limit, started: time.Now()}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", s.metrics)
	mux.HandleFunc("/healthz", s.healthz)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "reaper: /metrics (Prometheus), /healthz (200 while passes complete)")
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
	return s, nil
}

// Addr is the address it listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.srv.Shutdown(shut)
	}()
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Publish takes a pass's metrics (audit.MetricsText) and when it
// completed.
func (s *Server) Publish(text []byte, beat time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text, s.beat = text, beat
}

// metrics serves the last pass's series, then the process's own (go_*
// and process_*), in the text format every Prometheus scraper reads.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	text := s.text
	s.mu.Unlock()
	var b bytes.Buffer
	b.Write(text)
	writeOwn(&b)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

// writeOwn writes the process's own go_* and process_* series, each
// family with a HELP line: VictoriaMetrics/metrics writes none (or, with
// its metadata on, an empty one and TYPEs promtool's lint disputes), and
// promtool check metrics wants every family described.
func writeOwn(w *bytes.Buffer) {
	var raw bytes.Buffer
	metrics.WriteProcessMetrics(&raw)
	described := map[string]bool{}
	for _, line := range bytes.SplitAfter(raw.Bytes(), []byte("\n")) {
		end := bytes.IndexAny(line, "{ ")
		if len(line) == 0 || line[0] == '#' || end <= 0 {
			w.Write(line)
			continue
		}
		if name := string(line[:end]); !described[name] {
			described[name] = true
			what := "Go runtime"
			if strings.HasPrefix(name, "process_") {
				what = "Operating system"
			}
			fmt.Fprintf(w, "# HELP %s %s series of the reaper process (github.com/VictoriaMetrics/metrics).\n", name, what)
		}
		w.Write(line)
	}
}

// healthz is 200 while the last pass is no older than the limit (before
// the first, while the start is not), else 503, with the age in words.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	beat, started := s.beat, s.started
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if beat.IsZero() {
		if age := time.Since(started); age > s.limit {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "no pass completed in the %s since the start\n", age.Round(time.Second))
			return
		}
		fmt.Fprintln(w, "starting: the first pass is under way")
		return
	}
	age := time.Since(beat)
	if age > s.limit {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "the last pass completed %s ago (more than %s)\n", age.Round(time.Second), s.limit)
		return
	}
	fmt.Fprintf(w, "ok: the last pass completed %s ago\n", age.Round(time.Millisecond))
}
