package platform

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformed is wrapped by every parse error of a kernel file.
var ErrMalformed = errors.New("malformed")

// ParseStat parses the contents of /proc/PID/stat into p. pageSize converts
// the rss field (pages) to bytes.
//
// The comm field is the text between the first '(' and the last ')': comm is
// chosen by the process (prctl PR_SET_NAME, or its executable name) and may
// hold spaces, parentheses and newlines, so "foo) Z (bar" must not shift the
// fields after it. See proc_pid_stat(5).
func ParseStat(b []byte, pageSize uint64, p *Process) error {
	return parseStat(b, pageSize, p, nil)
}

// maxComms bounds the names a stat reader interns.
const maxComms = 4096

// parseStat is ParseStat, taking comm from comms when a process of the
// same name was read before: most of a large table shares a few names
// (sleep, node, bash), and one string each saves an allocation per
// process. comms may be nil.
func parseStat(b []byte, pageSize uint64, p *Process, comms map[string]string) error {
	open := bytes.IndexByte(b, '(')
	close := bytes.LastIndexByte(b, ')')
	if open < 1 || close < open {
		return fmt.Errorf("stat: no (comm): %w", ErrMalformed)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil || pid <= 0 {
		return fmt.Errorf("stat: bad pid %q: %w", b[:open], ErrMalformed)
	}
	p.PID = pid
	if name := b[open+1 : close]; comms == nil {
		p.Comm = string(name)
	} else if c, ok := comms[string(name)]; ok {
		p.Comm = c
	} else {
		p.Comm = string(name)
		if len(comms) < maxComms {
			comms[p.Comm] = p.Comm
		}
	}

	// Fields from 3 (state) on, numbered as in proc_pid_stat(5).
	rest := b[close+1:]
	var f fieldReader
	f.b = rest
	state := f.next()
	if len(state) != 1 {
		return fmt.Errorf("stat: bad state %q: %w", state, ErrMalformed)
	}
	p.State = state[0]
	var v [22]int64 // v[n] holds field n for 4 ≤ n ≤ 24
	for n := 4; n <= 24; n++ {
		tok := f.next()
		if tok == nil {
			return fmt.Errorf("stat: %d fields, want at least 24: %w", n-1, ErrMalformed)
		}
		x, err := parseInt(tok)
		if err != nil {
			return fmt.Errorf("stat: field %d %q: %w", n, tok, ErrMalformed)
		}
		v[n-4] = x
	}
	field := func(n int) int64 { return v[n-4] }
	p.PPID = int(field(4))
	p.PGID = int(field(5))
	p.SID = int(field(6))
	p.TTY = uint32(field(7))
	p.TPGID = int32(field(8))
	p.Flags = uint32(field(9))
	p.UTime = uint64(field(14))
	p.STime = uint64(field(15))
	p.Threads = int32(field(20))
	p.StartTicks = uint64(field(22))
	if rss := field(24); rss > 0 {
		p.RSS = uint64(rss) * pageSize
	} else {
		p.RSS = 0
	}
	if p.PPID < 0 || field(22) < 0 {
		return fmt.Errorf("stat: negative ppid or starttime: %w", ErrMalformed)
	}
	return nil
}

// fieldReader splits on single spaces without allocating.
type fieldReader struct{ b []byte }

func (f *fieldReader) next() []byte {
	for len(f.b) > 0 && (f.b[0] == ' ' || f.b[0] == '\n') {
		f.b = f.b[1:]
	}
	if len(f.b) == 0 {
		return nil
	}
	i := 0
	for i < len(f.b) && f.b[i] != ' ' && f.b[i] != '\n' {
		i++
	}
	tok := f.b[:i]
	f.b = f.b[i:]
	return tok
}

// parseInt parses a decimal integer without allocating. The kernel prints
// unsigned 64-bit fields (flags, times) that can exceed int64 in theory;
// those are clamped, which no field used here can reach.
func parseInt(b []byte) (int64, error) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 20 {
		return 0, ErrMalformed
	}
	var x uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, ErrMalformed
		}
		d := uint64(c - '0')
		if x > (1<<64-1-d)/10 {
			return 0, ErrMalformed
		}
		x = x*10 + d
	}
	if x > 1<<63-1 {
		x = 1<<63 - 1
	}
	if neg {
		return -int64(x), nil
	}
	return int64(x), nil
}

// ParseCmdline splits the contents of /proc/PID/cmdline (NUL-terminated
// arguments) into argv. A process that rewrote its argv area (Node's
// process.title, setproctitle) may leave one space-joined string and no
// trailing NUL; that is returned as one argument, as ps shows it.
func ParseCmdline(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// LookupEnv finds name in the contents of /proc/PID/environ (NUL-separated
// NAME=VALUE entries). The first entry wins, as getenv(3) does; entries
// without '=' are skipped (a process may scribble over its environment).
func LookupEnv(environ, name string) (string, bool) {
	if name == "" {
		return "", false
	}
	for len(environ) > 0 {
		entry := environ
		if i := strings.IndexByte(environ, 0); i >= 0 {
			entry, environ = environ[:i], environ[i+1:]
		} else {
			environ = ""
		}
		if len(entry) > len(name) && entry[len(name)] == '=' && entry[:len(name)] == name {
			return entry[len(name)+1:], true
		}
	}
	return "", false
}

// FormatIdentity formats a Linux start identity, "<boot_id>:<starttime>".
func FormatIdentity(bootID string, startTicks uint64) string {
	return bootID + ":" + strconv.FormatUint(startTicks, 10)
}

// ParseIdentity splits a Linux start identity into boot id and start ticks.
func ParseIdentity(s string) (bootID string, startTicks uint64, err error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return "", 0, fmt.Errorf("identity %q: want <boot_id>:<starttime>: %w", s, ErrMalformed)
	}
	startTicks, err = strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("identity %q: bad starttime: %w", s, ErrMalformed)
	}
	return s[:i], startTicks, nil
}

// ParseStatusUID returns the real uid from the "Uid:" line of a
// /proc/PID/status file ("Uid:\treal\teffective\tsaved\tfilesystem",
// proc(5)).
func ParseStatusUID(b []byte) (uint32, bool) {
	for len(b) > 0 {
		var line []byte
		line, b = cutByte(b, '\n')
		rest, ok := bytes.CutPrefix(line, []byte("Uid:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		uid, err := strconv.ParseUint(string(f[0]), 10, 32)
		if err != nil || uint32(uid) == NoUID {
			return 0, false
		}
		return uint32(uid), true
	}
	return 0, false
}

// cutByte splits b at its first sep: what comes before, and what after
// (nil when there is no sep) — the next line, entry or field of a file.
func cutByte(b []byte, sep byte) (head, rest []byte) {
	if i := bytes.IndexByte(b, sep); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// ParsePSS reads the "Pss:" line of smaps_rollup ("Pss:  1234 kB"), in
// bytes.
func ParsePSS(b []byte) (uint64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "Pss:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || kb > 1<<44 {
			break
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("smaps_rollup: no Pss line")
}
