//go:build linux

package realclients

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Model is the model stand-in the clients talk to: it takes every request
// (Anthropic Messages, OpenAI Responses and chat, Gemini) and holds it
// open — streaming headers sent, no answer — until the test ends: a turn
// in flight, the moment users kill a client in.
type Model struct {
	// Addr is where it listens, on the loopback.
	Addr string
	mu   sync.Mutex
	seen []string // "METHOD PATH" of each request
	done chan struct{}
	// answer, when set, may answer a request instead of holding it.
	answer func(body []byte) string
}

// StartModel starts a stand-in, stopped when the test ends.
func StartModel(t testing.TB) *Model {
	t.Helper()
	m := &Model{done: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.Addr = ln.Addr().String()
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	t.Cleanup(func() { close(m.done); srv.Close() })
	return m
}

// Answer makes the stand-in answer a request when f returns the event
// stream to send, and hold it when f returns "".
func (m *Model) Answer(f func(body []byte) string) {
	m.mu.Lock()
	m.answer = f
	m.mu.Unlock()
}

// ServeHTTP implements http.Handler.
func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	m.mu.Lock()
	m.seen = append(m.seen, r.Method+" "+r.URL.Path)
	answer := m.answer
	m.mu.Unlock()
	if r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if answer != nil {
		if events := answer(body); events != "" {
			io.WriteString(w, events)
			return
		}
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	select {
	case <-m.done:
	case <-r.Context().Done():
	}
}

// Turns is how many model requests have arrived.
func (m *Model) Turns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.seen {
		if strings.HasPrefix(s, "POST ") {
			n++
		}
	}
	return n
}

// Requests lists the requests that arrived, for a failure's message.
func (m *Model) Requests() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.seen, ", ")
}

// ChatToolCall is an OpenAI chat-completions event stream whose one
// choice calls the tool name with args (streamed as OpenAI does: a delta
// with the call, a finish, then [DONE]).
func ChatToolCall(name string, args map[string]any) string {
	a, _ := json.Marshal(args)
	chunk := func(delta map[string]any, finish any) string {
		b, _ := json.Marshal(map[string]any{"id": "stand-in", "object": "chat.completion.chunk", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		return "data: " + string(b) + "\n\n"
	}
	call := map[string]any{"index": 0, "id": "call_0", "type": "function", "function": map[string]any{"name": name, "arguments": string(a)}}
	return chunk(map[string]any{"role": "assistant", "tool_calls": []any{call}}, nil) + chunk(map[string]any{}, "tool_calls") + "data: [DONE]\n\n"
}
