package platform

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The layout of struct kinfo_proc (sys/sysctl.h) as sysctl kern.proc.*
// returns it on 64-bit macOS, amd64 and arm64 alike: 648 bytes, little
// endian. These offsets are checked at compile time against x/sys's
// unix.KinfoProc in kinfo_darwin.go, so a darwin build with a different
// layout does not compile.
const (
	kinfoSize      = 648
	kinfoStartSec  = 0   // kp_proc.p_starttime.tv_sec (int64)
	kinfoStartUsec = 8   // kp_proc.p_starttime.tv_usec (int32)
	kinfoStat      = 36  // kp_proc.p_stat (int8): SIDL 1, SRUN 2, SSLEEP 3, SSTOP 4, SZOMB 5
	kinfoPID       = 40  // kp_proc.p_pid (int32)
	kinfoComm      = 243 // kp_proc.p_comm [MAXCOMLEN+1]
	kinfoCommLen   = 17
	kinfoRUID      = 392 // kp_eproc.e_pcred.p_ruid (uint32): the real uid, who owns the process
	kinfoPPID      = 560 // kp_eproc.e_ppid (int32)
	kinfoPGID      = 564 // kp_eproc.e_pgid (int32)
)

// ParseKinfoProcs parses the records of sysctl kern.proc.all. Start is the
// process's start time in microseconds since the epoch: on macOS that is
// the start identity ("<seconds>.<microseconds>", ledger/schema.json).
func ParseKinfoProcs(b []byte) ([]Process, error) {
	if len(b)%kinfoSize != 0 {
		return nil, fmt.Errorf("kinfo_proc: %d bytes is not a whole number of %d-byte records: %w", len(b), kinfoSize, ErrMalformed)
	}
	le := binary.LittleEndian
	procs := make([]Process, 0, len(b)/kinfoSize)
	for off := 0; off < len(b); off += kinfoSize {
		r := b[off : off+kinfoSize]
		sec := int64(le.Uint64(r[kinfoStartSec:]))
		usec := int64(int32(le.Uint32(r[kinfoStartUsec:])))
		pid := int(int32(le.Uint32(r[kinfoPID:])))
		if pid < 0 || sec < 0 || usec < 0 || usec >= 1e6 {
			return nil, fmt.Errorf("kinfo_proc record %d: pid %d, start %d.%d: %w", off/kinfoSize, pid, sec, usec, ErrMalformed)
		}
		comm := r[kinfoComm : kinfoComm+kinfoCommLen]
		if i := bytes.IndexByte(comm, 0); i >= 0 {
			comm = comm[:i]
		}
		p := Process{
			PID:        pid,
			PPID:       int(int32(le.Uint32(r[kinfoPPID:]))),
			PGID:       int(int32(le.Uint32(r[kinfoPGID:]))),
			UID:        le.Uint32(r[kinfoRUID:]),
			Comm:       string(comm),
			State:      darwinState(int8(r[kinfoStat])),
			StartTicks: uint64(sec)*1e6 + uint64(usec),
		}
		if p.PPID < 0 {
			p.PPID = 0
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// darwinState maps p_stat to the Linux state letters the rest of reaper
// knows.
func darwinState(s int8) byte {
	switch s {
	case 1, 2: // SIDL (being created), SRUN
		return 'R'
	case 4: // SSTOP
		return 'T'
	case 5: // SZOMB
		return 'Z'
	}
	return 'S' // SSLEEP, and anything unknown
}

// FormatDarwinIdentity formats a macOS start identity from microseconds
// since the epoch: "<seconds>.<microseconds>".
func FormatDarwinIdentity(startMicros uint64) string {
	return fmt.Sprintf("%d.%06d", startMicros/1e6, startMicros%1e6)
}

// ParseDarwinIdentity is the inverse of FormatDarwinIdentity.
func ParseDarwinIdentity(s string) (uint64, error) {
	sec, usec, ok := strings.Cut(s, ".")
	if !ok || len(usec) != 6 {
		return 0, fmt.Errorf("identity %q: want <seconds>.<microseconds>: %w", s, ErrMalformed)
	}
	a, err1 := strconv.ParseUint(sec, 10, 64)
	b, err2 := strconv.ParseUint(usec, 10, 64)
	if err1 != nil || err2 != nil || a > 1<<40 {
		return 0, fmt.Errorf("identity %q: %w", s, ErrMalformed)
	}
	return a*1e6 + b, nil
}

// ErrNoArgs says a process's arguments can't be read (another user's
// process without privilege; zombies; kernel processes).
var ErrNoArgs = errors.New("arguments not readable")

// ParseProcArgs2 parses sysctl kern.procargs2.<pid>: a 32-bit argc, the
// executable path, NUL padding, argc NUL-terminated arguments, then the
// environment as NUL-terminated NAME=VALUE strings up to an empty one
// (what ps(1) reads on macOS). Apple's own `ps` treats the layout the same.
func ParseProcArgs2(b []byte) (argv, env []string, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("procargs2: %d bytes: %w", len(b), ErrMalformed)
	}
	argc := int(int32(binary.LittleEndian.Uint32(b)))
	rest := b[4:]
	if argc < 0 || argc > len(rest) {
		return nil, nil, fmt.Errorf("procargs2: argc %d: %w", argc, ErrMalformed)
	}
	// The executable path, then the NULs that pad it.
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, nil, fmt.Errorf("procargs2: unterminated executable path: %w", ErrMalformed)
	}
	rest = rest[i:]
	for len(rest) > 0 && rest[0] == 0 {
		rest = rest[1:]
	}
	next := func() (string, bool) {
		j := bytes.IndexByte(rest, 0)
		if j < 0 {
			if len(rest) == 0 {
				return "", false
			}
			s := string(rest)
			rest = nil
			return s, true
		}
		s := string(rest[:j])
		rest = rest[j+1:]
		return s, true
	}
	for k := 0; k < argc; k++ {
		a, ok := next()
		if !ok {
			return nil, nil, fmt.Errorf("procargs2: %d of %d arguments: %w", k, argc, ErrMalformed)
		}
		argv = append(argv, a)
	}
	for {
		e, ok := next()
		if !ok || e == "" {
			break
		}
		if strings.IndexByte(e, '=') > 0 {
			env = append(env, e)
		}
	}
	return argv, env, nil
}
