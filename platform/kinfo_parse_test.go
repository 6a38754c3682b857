package platform

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// kinfo builds one kinfo_proc record as macOS lays it out.
func kinfo(pid, ppid, pgid int, uid uint32, stat int8, comm string, sec int64, usec int32) []byte {
	r := make([]byte, kinfoSize)
	le := binary.LittleEndian
	le.PutUint64(r[kinfoStartSec:], uint64(sec))
	le.PutUint32(r[kinfoStartUsec:], uint32(usec))
	r[kinfoStat] = byte(stat)
	le.PutUint32(r[kinfoPID:], uint32(int32(pid)))
	copy(r[kinfoComm:kinfoComm+kinfoCommLen-1], comm)
	le.PutUint32(r[kinfoRUID:], uid)
	le.PutUint32(r[kinfoPPID:], uint32(int32(ppid)))
	le.PutUint32(r[kinfoPGID:], uint32(int32(pgid)))
	return r
}

// fakeProcargs2 builds a kern.procargs2 value as macOS lays it out.
func fakeProcargs2(exe string, argv, env []string) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(argv)))
	b = append(b, exe...)
	b = append(b, 0, 0, 0, 0) // the path's NUL and padding
	for _, a := range argv {
		b = append(append(b, a...), 0)
	}
	for _, e := range env {
		b = append(append(b, e...), 0)
	}
	return append(b, 0)
}

func TestParseKinfoProcs(t *testing.T) {
	raw := append(kinfo(1, 0, 1, 0, 3, "launchd", 1700000000, 5), kinfo(4321, 1, 4321, 501, 5, "a-very-long-command-name", 1700000100, 999999)...)
	got, err := ParseKinfoProcs(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{
		{PID: 1, PGID: 1, Comm: "launchd", State: 'S', StartTicks: 1700000000*1e6 + 5},
		{PID: 4321, PPID: 1, PGID: 4321, UID: 501, Comm: "a-very-long-comm", State: 'Z', StartTicks: 1700000100*1e6 + 999999},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if FormatDarwinIdentity(got[1].StartTicks) != "1700000100.999999" {
		t.Errorf("identity %s", FormatDarwinIdentity(got[1].StartTicks))
	}
	if us, err := ParseDarwinIdentity("1700000100.000042"); err != nil || us != 1700000100*1e6+42 {
		t.Errorf("ParseDarwinIdentity = %d, %v", us, err)
	}
	for _, bad := range []string{"", "17", "17.5", "x.000001", "1.0000001"} {
		if _, err := ParseDarwinIdentity(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseDarwinIdentity(%q) = %v", bad, err)
		}
	}
	states := map[int8]byte{1: 'R', 2: 'R', 3: 'S', 4: 'T', 5: 'Z', 9: 'S'}
	for s, want := range states {
		if got := darwinState(s); got != want {
			t.Errorf("darwinState(%d) = %c, want %c", s, got, want)
		}
	}
	for name, b := range map[string][]byte{
		"short":         raw[:100],
		"negative pid":  kinfo(-5, 1, 1, 0, 3, "x", 1, 0),
		"usec too big":  kinfo(5, 1, 1, 0, 3, "x", 1, 1000000),
		"negative time": kinfo(5, 1, 1, 0, 3, "x", -1, 0),
	} {
		if _, err := ParseKinfoProcs(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestParseProcArgs2(t *testing.T) {
	argv, env, err := ParseProcArgs2(fakeProcargs2("/usr/local/bin/node",
		[]string{"node", "/Users/a/.openclaw/acpx/codex-acp-wrapper.mjs", "--openclaw-acpx-lease-id", "L1"},
		[]string{"OPENCLAW_SHELL=acp", "garbage", "HOME=/Users/a"}))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(argv, []string{"node", "/Users/a/.openclaw/acpx/codex-acp-wrapper.mjs", "--openclaw-acpx-lease-id", "L1"}) {
		t.Errorf("argv %q", argv)
	}
	if !reflect.DeepEqual(env, []string{"OPENCLAW_SHELL=acp", "HOME=/Users/a"}) {
		t.Errorf("env %q", env)
	}
	if argv, env, err := ParseProcArgs2(fakeProcargs2("/bin/sleep", []string{"sleep", "9"}, nil)); err != nil || len(argv) != 2 || len(env) != 0 {
		t.Errorf("no env: %q %q %v", argv, env, err)
	}
	for name, b := range map[string][]byte{
		"empty":           nil,
		"argc only":       {1, 0, 0, 0},
		"too many args":   binary.LittleEndian.AppendUint32(nil, 1<<20),
		"negative argc":   {0xff, 0xff, 0xff, 0xff, 'x', 0},
		"missing args":    fakeProcargs2("/x", nil, nil)[:4],
		"truncated arg 2": append(binary.LittleEndian.AppendUint32(nil, 3), "/x\x00a\x00b"...),
	} {
		if _, _, err := ParseProcArgs2(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzParseDarwin(f *testing.F) {
	f.Add(kinfo(1, 0, 1, 0, 3, "launchd", 1700000000, 5))
	f.Add(fakeProcargs2("/bin/sh", []string{"sh", "-c", "x"}, []string{"A=1"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if procs, err := ParseKinfoProcs(b); err == nil {
			for _, p := range procs {
				if p.PID < 0 || p.PPID < 0 {
					t.Fatalf("accepted %+v", p)
				}
			}
		} else if !errors.Is(err, ErrMalformed) {
			t.Fatal(err)
		}
		argv, env, err := ParseProcArgs2(b)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatal(err)
		}
		if err == nil && len(argv) > len(b) {
			t.Fatalf("%d args from %d bytes", len(argv), len(b))
		}
		for _, e := range env {
			if LookupEnvName(e) == "" {
				t.Fatalf("env entry %q without a name", e)
			}
		}
	})
}

// LookupEnvName is the NAME of a NAME=VALUE entry.
func LookupEnvName(e string) string {
	for i := 0; i < len(e); i++ {
		if e[i] == '=' {
			return e[:i]
		}
	}
	return ""
}
