package audit

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
)

// NewLogger is the log of a command: one line per record, in the form
// every other line of reaper's takes — "reaper watch: warning: the
// policy was not read again (err=…)" — not logfmt beside "reaper: …"
// lines. The command's name is who; records below level are dropped. A
// journal adds its own time; a watch's pass lines carry theirs
// (Report.WriteQuietAs).
func NewLogger(w io.Writer, who string, level slog.Level) *slog.Logger {
	return slog.New(&logHandler{w: w, who: who, level: level, mu: &sync.Mutex{}})
}

type logHandler struct {
	w      io.Writer
	who    string
	level  slog.Level
	attrs  []slog.Attr
	prefix string // a group's name and a dot, for the keys
	mu     *sync.Mutex
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("reaper " + h.who + ": ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	case r.Level < slog.LevelInfo:
		b.WriteString("debug: ")
	}
	// Escaped: a message or a value can quote what a user named.
	b.WriteString(Printable(r.Message))
	attrs := append([]slog.Attr{}, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		a.Key = h.prefix + a.Key
		attrs = append(attrs, a)
		return true
	})
	for i, a := range attrs {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		v := Printable(a.Value.Resolve().String())
		if v == "" || strings.ContainsAny(v, " ,()=\"") {
			v = strconv.Quote(v)
		}
		b.WriteString(Printable(a.Key) + "=" + v)
		if i == len(attrs)-1 {
			b.WriteByte(')')
		}
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr{}, h.attrs...)
	for _, a := range attrs {
		a.Key = h.prefix + a.Key
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.prefix = h.prefix + name + "."
	return &c
}
