package scrape

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/orphanreaper/reaper/platform"
)

// Server is one endpoint. Publish gives it each pass's metrics; until
// the first, /metrics serves the process's own series alone.
//
// It is bounded whoever connects (every local user, on loopback): at
// most MaxConns connections, the oldest closed past it (capListener); no
// keep-alive; seconds to send a request and to take the answer; requests
// of at most 8 KiB of headers and no body; an answer of at most MaxBody,
// written from the one copy Publish holds, never copied per scrape.
type Server struct {
	ln  *capListener
	srv *http.Server
	// limit is how old the last pass may be before /healthz fails.
	limit time.Duration
	// token, when set, is the bearer token /metrics asks for
	// (Authorization: Bearer …).
	token []byte

	mu      sync.Mutex
	text    []byte
	beat    time.Time
	started time.Time
}

// The endpoint's bounds: how long a client may take to send its request
// and to read the answer, and how many bytes an answer holds. A pass's
// series are bounded where they are made (audit.MetricsText: labels
// clipped, each user's series counted); MaxBody is the last bound, for
// whatever slips past.
const (
	readTimeout  = 3 * time.Second
	writeTimeout = 10 * time.Second
	MaxBody      = 4 << 20
)

// Options are how an endpoint is reached.
type Options struct {
	// Limit is the oldest a last pass may be and the endpoint healthy: a
	// watch's backstop and its pass's timeout, with room.
	Limit time.Duration
	// Token, when set, is the bearer token /metrics wants: a scraper
	// that may reach the port but should not read the series (a pod's
	// other containers, a host's users) is answered 401 without it.
	// /healthz stays open: it says only whether passes complete.
	Token []byte
	// TokenFile is where Token is read from (a file of at most 4 KiB,
	// read as the policy is: regular, bounded), when Token is not set.
	TokenFile string
}

// maxToken bounds a token file.
const maxToken = 4 << 10

// Listen listens on addr (host:port; port 0 picks one: Addr says which).
// limit is the oldest a last pass may be and the endpoint healthy: a
// watch's backstop and its pass's timeout, with room.
func Listen(addr string, limit time.Duration) (*Server, error) {
	return ListenWith(addr, Options{Limit: limit})
}

// ListenWith listens on addr as opts say.
func ListenWith(addr string, opts Options) (*Server, error) {
	if opts.Token == nil && opts.TokenFile != "" {
		b, err := platform.ReadFile(opts.TokenFile, maxToken)
		if err != nil {
			return nil, fmt.Errorf("token: %w", err)
		}
		if opts.Token = bytes.TrimSpace(b); len(opts.Token) == 0 {
			return nil, fmt.Errorf("token file %s is empty", opts.TokenFile)
		}
	}
	ln, err := net.Listen("tcp", LoopbackDefault(addr))
	if err != nil {
		return nil, err
	}
	s := &Server{ln: limitListener(ln, MaxConns), limit: opts.Limit, token: opts.Token, started: time.Now()}
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
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: readTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: time.Second, MaxHeaderBytes: 8 << 10,
		ErrorLog: discardLog}
	s.srv.SetKeepAlivesEnabled(false)
	return s, nil
}

// LoopbackDefault makes a port alone ("9469"), or a host:port with no
// host (":9469"), loopback's: an endpoint other hosts reach is asked for
// by its address (0.0.0.0:9469, the pod's).
func LoopbackDefault(addr string) string {
	if !strings.Contains(addr, ":") {
		return net.JoinHostPort("127.0.0.1", addr)
	}
	if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

// ReachedBy says who can read the endpoint's series.
func (s *Server) ReachedBy() string {
	who := "every host that reaches this address"
	if host, _, err := net.SplitHostPort(s.Addr()); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			who = "every user of this host (loopback)"
		}
	}
	if s.token != nil {
		return "/metrics for " + who + " with the token, /healthz for " + who
	}
	return "readable by " + who
}

// Held is how many connections the endpoint holds open now.
func (s *Server) Held() int { return s.ln.Held() }

// discardLog takes net/http's own lines (a client that went away, a
// header too large): each is a client's doing, one line a connection,
// and no business of the watch's log.
var discardLog = log.New(io.Discard, "", 0)

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
	if s.token != nil && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="reaper"`)
		http.Error(w, "unauthorized: this endpoint wants its bearer token", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	text := s.text
	s.mu.Unlock()
	if len(text) > MaxBody {
		// Past the bound, whole lines up to it and a comment that says
		// so: a scraper reads what is there, and the text stays valid.
		cut := bytes.LastIndexByte(text[:MaxBody], '\n') + 1
		text = append(text[:cut:cut], fmt.Sprintf("# reaper: %d bytes of this pass's series left out (more than %d)\n", len(s.text)-cut, MaxBody)...)
	}
	var own bytes.Buffer
	writeOwn(&own)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", fmt.Sprint(len(text)+own.Len()))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(text) // the pass's one copy: every scrape writes from it
	w.Write(own.Bytes())
}

// authorized reports whether r carries the endpoint's bearer token,
// compared in constant time.
func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), s.token) == 1
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
