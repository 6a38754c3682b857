package openclaw

import (
	"testing"
)

func TestUUIDv7Time(t *testing.T) {
	for _, tt := range []struct {
		id   string
		want int64
	}{
		{"01a2048b-d273-7c41-864c-1c9d90fbcfa0", 0x01a2048bd273}, // a thread of the real codex 0.154
		{"01a2048b-d273-4c41-864c-1c9d90fbcfa0", 0},              // v4: no time in it
		{"01a2048b-d273-7c41-864c", 0},
		{"zzzzzzzz-zzzz-7zzz-zzzz-zzzzzzzzzzzz", 0},
		{"", 0},
	} {
		got := uuidV7Time(tt.id)
		if (tt.want == 0) != got.IsZero() || tt.want != 0 && got.UnixMilli() != tt.want {
			t.Errorf("%q: %v, want %d ms", tt.id, got, tt.want)
		}
	}
}

// Codex rows hold whatever the store holds: any values give threads that
// are named, each once, bound only if a binding names them, and rows that
// don't parse are counted.
func FuzzCodexRows(f *testing.F) {
	f.Add(`{"version":1,"state":"active","binding":{"threadId":"01a2048b-d273-7c41-864c-1c9d90fbcfa0"}}`, `{"threadId":"01a2048b-d273-7c41-864c-1c9d90fbcfa0"}`, `{"parent":{"pid":1},"child":{"pid":2,"startedAt":"b:1"}}`)
	f.Add(`{"binding": [`, `null`, `{"child":{"pid":-1}}`)
	f.Add(`{"binding":{"threadId":""}}`, `{"threadId":7}`, ``)
	f.Fuzz(func(t *testing.T, binding, managed, registry string) {
		cx := &CodexRows{}
		bad := 0
		for _, row := range [][2]string{{"app-server-managed-threads", managed}, {"app-server-thread-bindings", binding}, {"app-server-processes", registry}} {
			if !cx.add(row[0], row[1]) {
				bad++
			}
		}
		seen := map[string]bool{}
		for _, th := range cx.Threads {
			if th.ID == "" || seen[th.ID] {
				t.Fatalf("thread %q empty or twice: %+v", th.ID, cx.Threads)
			}
			seen[th.ID] = true
		}
		if n := len(cx.Threads) + len(cx.Servers) + bad; n > 3 || len(cx.Servers) > 1 || bad+len(cx.Servers) > 3 {
			t.Fatalf("%d threads, %d servers, %d bad from 3 rows", len(cx.Threads), len(cx.Servers), bad)
		}
		only := &CodexRows{}
		only.add("app-server-managed-threads", managed)
		for _, th := range only.Threads {
			if th.Bound {
				t.Fatalf("thread %q bound with no binding row", th.ID)
			}
		}
		for _, c := range cx.Servers {
			if c.Child.PID <= 0 {
				t.Fatalf("registry row without a child pid kept: %+v", c)
			}
		}
	})
}
