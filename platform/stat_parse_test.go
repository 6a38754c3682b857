package platform

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// statLine builds a /proc/PID/stat line with the given head fields; the
// tail is padded to the 52 fields current kernels print.
func statLine(pid int, comm string, state string, ppid, pgid, sid int, tty uint32, flags uint32, start, rss uint64) string {
	fields := []string{state, fmt.Sprint(ppid), fmt.Sprint(pgid), fmt.Sprint(sid), fmt.Sprint(tty), "-1",
		fmt.Sprint(flags), "100", "0", "0", "0", "7", "3", "0", "0", "20", "0", "1", "0",
		fmt.Sprint(start), "123456", fmt.Sprint(rss), "18446744073709551615"}
	for len(fields) < 50 {
		fields = append(fields, "0")
	}
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(fields, " "))
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Process
	}{
		{
			name: "plain",
			line: statLine(4321, "node", "S", 1, 4321, 4321, 0, 0x400100, 987654, 10),
			want: Process{PID: 4321, PPID: 1, PGID: 4321, SID: 4321, State: 'S', Comm: "node", Flags: 0x400100,
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 987654, RSS: 10 * 4096},
		},
		{
			name: "comm with parens and spaces",
			line: statLine(500, "foo) Z (bar", "S", 1, 500, 500, 0, 0, 42, 1),
			want: Process{PID: 500, PPID: 1, PGID: 500, SID: 500, State: 'S', Comm: "foo) Z (bar",
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 42, RSS: 4096},
		},
		{
			name: "comm ending in paren-space-digits",
			line: statLine(501, "x) 1 2 3 (", "R", 7, 7, 7, 0, 0, 43, 2),
			want: Process{PID: 501, PPID: 7, PGID: 7, SID: 7, State: 'R', Comm: "x) 1 2 3 (",
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 43, RSS: 8192},
		},
		{
			name: "comm with newline",
			line: statLine(502, "evil\nname", "S", 1, 502, 502, 0, 0, 44, 0),
			want: Process{PID: 502, PPID: 1, PGID: 502, SID: 502, State: 'S', Comm: "evil\nname",
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 44},
		},
		{
			name: "empty comm",
			line: statLine(503, "", "S", 1, 503, 503, 0, 0, 45, 0),
			want: Process{PID: 503, PPID: 1, PGID: 503, SID: 503, State: 'S', Comm: "",
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 45},
		},
		{
			name: "kernel thread",
			line: statLine(3, "kworker/0:0-events", "I", 2, 0, 0, 0, 0x04208060, 2, 0),
			want: Process{PID: 3, PPID: 2, State: 'I', Comm: "kworker/0:0-events", Flags: 0x04208060,
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 2},
		},
		{
			name: "zombie",
			line: statLine(77, "sh", "Z", 76, 76, 76, 0, 0x40040c, 500, 0),
			want: Process{PID: 77, PPID: 76, PGID: 76, SID: 76, State: 'Z', Comm: "sh", Flags: 0x40040c,
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 500},
		},
		{
			name: "pts terminal",
			line: statLine(600, "bash", "S", 1, 600, 600, 136<<8|3, 0, 9, 1),
			want: Process{PID: 600, PPID: 1, PGID: 600, SID: 600, TTY: 136<<8 | 3, State: 'S', Comm: "bash",
				Threads: 1, TPGID: -1, UTime: 7, STime: 3, StartTicks: 9, RSS: 4096},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got Process
			if err := ParseStat([]byte(tt.line), 4096, &got); err != nil {
				t.Fatalf("ParseStat: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatMalformed(t *testing.T) {
	tests := []struct{ name, line string }{
		{"empty", ""},
		{"no parens", "12 node S 1 2 3"},
		{"no closing paren", "12 (node S 1 2 3"},
		{"bad pid", "x1 (node) S 1"},
		{"truncated", "12 (node) S 1 12 12 0 -1"},
		{"two-letter state", strings.Replace(statLine(12, "n", "S", 1, 1, 1, 0, 0, 1, 1), ") S ", ") SS ", 1)},
		{"non-numeric field", strings.Replace(statLine(12, "n", "S", 1, 1, 1, 0, 0, 1, 1), " 123456 ", " 12x456 ", 1)},
		{"huge number", strings.Replace(statLine(12, "n", "S", 1, 1, 1, 0, 0, 1, 1), " 123456 ", " 999999999999999999999999 ", 1)},
		{"negative starttime", "12 (n) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Process
			err := ParseStat([]byte(tt.line), 4096, &p)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseStat(%q) = %v, want ErrMalformed", tt.line, err)
			}
		})
	}
}

func TestKernelThreadZombieLeader(t *testing.T) {
	tests := []struct {
		name                    string
		p                       Process
		kthread, zombie, leader bool
		pts                     int
	}{
		{"kthread by flag", Process{PID: 50, PPID: 2, Flags: pfKthread}, true, false, false, -1},
		{"kthreadd", Process{PID: 2, Flags: pfKthread}, true, false, false, -1},
		// A container's PID namespace sees no kernel thread: its pid 2,
		// and the children of pid 2, are ordinary processes.
		{"pid 2 in a container", Process{PID: 2, PPID: 1, SID: 2}, false, false, true, -1},
		{"a child of pid 2 in a container", Process{PID: 7, PPID: 2, SID: 2}, false, false, false, -1},
		{"user process", Process{PID: 51, PPID: 1, SID: 51}, false, false, true, -1},
		{"zombie", Process{PID: 52, PPID: 1, State: 'Z'}, false, true, false, -1},
		{"dead", Process{PID: 53, PPID: 1, State: 'X'}, false, true, false, -1},
		{"pts/3", Process{PID: 54, SID: 54, TTY: 136<<8 | 3}, false, false, true, 3},
		{"pts/300 (minor high bits)", Process{PID: 55, SID: 1, TTY: 136<<8 | (300 & 0xff) | (300>>8)<<20}, false, false, false, 300},
		{"pts/1048580 (second major)", Process{PID: 56, TTY: 137<<8 | 4}, false, false, false, 1<<20 | 4},
		{"tty1 is not a pty", Process{PID: 57, TTY: 4<<8 | 1}, false, false, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.KernelThread(); got != tt.kthread {
				t.Errorf("KernelThread = %v, want %v", got, tt.kthread)
			}
			if got := tt.p.Zombie(); got != tt.zombie {
				t.Errorf("Zombie = %v, want %v", got, tt.zombie)
			}
			if got := tt.p.SessionLeader(); got != tt.leader {
				t.Errorf("SessionLeader = %v, want %v", got, tt.leader)
			}
			if got := tt.p.PTS(); got != tt.pts {
				t.Errorf("PTS = %d, want %d", got, tt.pts)
			}
		})
	}
}

func TestParseCmdlineEnviron(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty (kernel thread, zombie)", "", nil},
		{"argv", "node\x00/srv/x.js\x00--stdio\x00", []string{"node", "/srv/x.js", "--stdio"}},
		{"rewritten title, no NUL", "openclaw-gateway", []string{"openclaw-gateway"}},
		{"rewritten title, NUL padding", "npm exec mcp-remote\x00\x00\x00", []string{"npm exec mcp-remote"}},
		{"empty argument kept", "sh\x00-c\x00\x00x\x00", []string{"sh", "-c", "", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseCmdline([]byte(tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseCmdline(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLookupEnv(t *testing.T) {
	env := "A=1\x00garbage\x00=noname\x00B=x=y\x00AB=2\x00A=shadowed\x00EMPTY=\x00"
	tests := []struct {
		name, want string
		ok         bool
	}{
		{"A", "1", true}, {"B", "x=y", true}, {"AB", "2", true}, {"EMPTY", "", true},
		{"garbage", "", false}, {"", "", false}, {"C", "", false}, {"x", "", false},
	}
	for _, tt := range tests {
		if got, ok := LookupEnv(env, tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("LookupEnv(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIdentity(t *testing.T) {
	id := FormatIdentity("6a1f0c2e-3b7d-4c1e-9f00-0123456789ab", 123456)
	if id != "6a1f0c2e-3b7d-4c1e-9f00-0123456789ab:123456" {
		t.Fatalf("FormatIdentity = %q", id)
	}
	boot, start, err := ParseIdentity(id)
	if err != nil || boot != "6a1f0c2e-3b7d-4c1e-9f00-0123456789ab" || start != 123456 {
		t.Fatalf("ParseIdentity = %q, %d, %v", boot, start, err)
	}
	for _, bad := range []string{"", "123", ":5", "boot:", "boot:-1", "boot:x"} {
		if _, _, err := ParseIdentity(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseIdentity(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(statLine(1, "systemd", "S", 0, 1, 1, 0, 0, 1, 100)))
	f.Add([]byte(statLine(500, "foo) Z (bar", "S", 1, 500, 500, 0, 0, 42, 1)))
	f.Add([]byte("12 (n) S 1"))
	f.Add([]byte("() ) ) ("))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p Process
		if err := ParseStat(b, 4096, &p); err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if p.PID <= 0 || p.PPID < 0 {
			t.Fatalf("accepted pid %d ppid %d", p.PID, p.PPID)
		}
	})
}

func FuzzParseCmdline(f *testing.F) {
	f.Add([]byte("node\x00x.js\x00"))
	f.Add([]byte("\x00\x00"))
	f.Add([]byte("A=1\x00B\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		argv := ParseCmdline(b)
		if len(b) > 0 && len(argv) > len(b) {
			t.Fatalf("%d args from %d bytes", len(argv), len(b))
		}
	})
}

func FuzzLookupEnv(f *testing.F) {
	f.Add("A=1\x00B=2\x00", "B")
	f.Add("\x00=\x00==\x00", "")
	f.Fuzz(func(t *testing.T, environ, name string) {
		v, ok := LookupEnv(environ, name)
		if !ok {
			return
		}
		if !strings.Contains(environ, name+"="+v) || strings.ContainsRune(v, 0) {
			t.Fatalf("LookupEnv(%q, %q) = %q, not an entry of the input", environ, name, v)
		}
	})
}

func TestParsePTSLink(t *testing.T) {
	tests := []struct {
		link string
		want Terminal
	}{
		{"/dev/pts/3", Terminal{PTS: 3}},
		{"/dev/pts/12 (deleted)", Terminal{PTS: 12, HungUp: true}},
		{"/dev/null", Terminal{PTS: -1}},
		{"/dev/pts/ptmx", Terminal{PTS: -1}},
		{"/dev/tty1", Terminal{PTS: -1}},
		{"", Terminal{PTS: -1}},
		{"/dev/pts/-1", Terminal{PTS: -1}},
	}
	for _, tt := range tests {
		if got := parsePTSLink(tt.link); got != tt.want {
			t.Errorf("parsePTSLink(%q) = %+v, want %+v", tt.link, got, tt.want)
		}
	}
}

func TestParseStatusUID(t *testing.T) {
	tests := []struct {
		in   string
		uid  uint32
		want bool
	}{
		{"Name:\tsleep\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n", 1000, true},
		{"Uid:\t0\t1000\t1000\t1000\n", 0, true},
		{"Name:\tx\n", 0, false},
		{"Uid:\n", 0, false},
		{"Uid:\tabc\t0\t0\t0\n", 0, false},
		{"Uid:\t4294967295\t0\t0\t0\n", 0, false}, // (uid_t)-1 is no account
	}
	for _, tt := range tests {
		uid, ok := ParseStatusUID([]byte(tt.in))
		if uid != tt.uid || ok != tt.want {
			t.Errorf("ParseStatusUID(%q) = %d, %v; want %d, %v", tt.in, uid, ok, tt.uid, tt.want)
		}
	}
}

func FuzzParseStatusUID(f *testing.F) {
	f.Add([]byte("Name:\tsleep\nUid:\t1000\t0\t0\t0\n"))
	f.Add([]byte("Uid:\t4294967295\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if uid, ok := ParseStatusUID(b); ok && uid == NoUID {
			t.Fatalf("NoUID accepted as a uid from %q", b)
		}
	})
}

func TestParsePSS(t *testing.T) {
	rollup := "55d0c0a5e000-7ffd2b7f2000 ---p 00000000 00:00 0                          [rollup]\nRss:                3840 kB\nPss:                1061 kB\nPss_Dirty:           312 kB\nShared_Clean:       2940 kB\n"
	if got, err := ParsePSS([]byte(rollup)); err != nil || got != 1061<<10 {
		t.Errorf("ParsePSS = %d, %v; want %d", got, err, 1061<<10)
	}
	for _, bad := range []string{"", "Rss: 1 kB\n", "Pss: x kB\n", "Pss: 12 MB\n", "Pss:\n"} {
		if _, err := ParsePSS([]byte(bad)); err == nil {
			t.Errorf("ParsePSS(%q): no error", bad)
		}
	}
}
