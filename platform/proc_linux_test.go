package platform

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const fixtureRoot = "../testdata/proc"

func TestReadSnapshotFixture(t *testing.T) {
	s, err := ReadSnapshot(fixtureRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	if s.BootID != "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0" {
		t.Errorf("BootID = %q", s.BootID)
	}
	if s.Uptime != 100000*time.Second {
		t.Errorf("Uptime = %v", s.Uptime)
	}
	if s.Self != 0 {
		t.Errorf("Self = %d for a fixture, want 0", s.Self)
	}
	if s.PTY != (PTYUsage{InUse: 5, Max: 4096}) {
		t.Errorf("PTY = %+v", s.PTY)
	}
	if len(s.Procs) != 24 {
		t.Errorf("%d processes, want 24", len(s.Procs))
	}
	for i := 1; i < len(s.Procs); i++ {
		if s.Procs[i-1].PID >= s.Procs[i].PID {
			t.Fatalf("not sorted at %d", i)
		}
	}

	tests := []struct {
		pid     int
		comm    string
		ppid    int
		kthread bool
		zombie  bool
		pts     int
		cmdline string
		cgroup  string
	}{
		{pid: 1, comm: "systemd", cmdline: "/sbin/init splash", cgroup: "/init.scope"},
		{pid: 2, comm: "kthreadd", kthread: true, cmdline: "[kthreadd]"},
		{pid: 3, comm: "kworker/0:0-events", ppid: 2, kthread: true, cmdline: "[kworker/0:0-events]"},
		{pid: 202, comm: "sh", ppid: 200, zombie: true, cmdline: "[sh]"},
		{pid: 300, comm: "node", ppid: 100,
			cmdline: "/usr/bin/node /home/alice/.openclaw/acpx/claude-agent-acp-wrapper.mjs --openclaw-acpx-lease-id lease-1 --openclaw-gateway-instance-id gw-1",
			cgroup:  "/user.slice/user-1000.slice/user@1000.service/app.slice/openclaw-gateway.service"},
		{pid: 500, comm: "foo) Z (bar", ppid: 1, cmdline: "python3 /srv/fake_mcp_server.py --stdio", cgroup: "/system.slice/fake.service"},
		{pid: 510, comm: "evil\nname x", ppid: 1, cmdline: "evil name", cgroup: "/"},
		{pid: 600, comm: "bash", ppid: 100, pts: 3, cmdline: "/bin/bash -c npm test -- --watch"},
		{pid: 700, comm: "node", ppid: 650, cmdline: "node mcp-server-memory"},
		{pid: 900, comm: "node", ppid: 1, cmdline: "node /srv/mcp/weather-mcp/index.js",
			cgroup: "/user.slice/user-1000.slice/user@1000.service/app.slice/openclaw-gateway-work.service"},
	}
	for _, tt := range tests {
		p := s.Get(tt.pid)
		if p == nil {
			t.Errorf("pid %d missing", tt.pid)
			continue
		}
		if p.Comm != tt.comm || p.PPID != tt.ppid || p.KernelThread() != tt.kthread || p.Zombie() != tt.zombie {
			t.Errorf("pid %d: comm %q ppid %d kthread %v zombie %v; want %q %d %v %v",
				tt.pid, p.Comm, p.PPID, p.KernelThread(), p.Zombie(), tt.comm, tt.ppid, tt.kthread, tt.zombie)
		}
		if tt.pts != 0 && p.PTS() != tt.pts {
			t.Errorf("pid %d: PTS %d, want %d", tt.pid, p.PTS(), tt.pts)
		}
		if got := s.CommandLine(p); got != tt.cmdline {
			t.Errorf("pid %d: CommandLine %q, want %q", tt.pid, got, tt.cmdline)
		}
		if tt.cgroup != "" {
			if got := s.Cgroup(p).Path(); got != tt.cgroup {
				t.Errorf("pid %d: cgroup %q, want %q", tt.pid, got, tt.cgroup)
			}
		}
	}
	if v, ok := s.Getenv(s.Get(300), "OPENCLAW_GATEWAY_SERVICE_PID"); !ok || v != "150" {
		t.Errorf("Getenv(300) = %q, %v", v, ok)
	}
	if _, ok := s.Getenv(s.Get(300), "OPENCLAW_GATEWAY_SERVICE"); ok {
		t.Error("Getenv matched a prefix of a name")
	}
	if got := s.Identity(s.Get(200)); got != "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0:9000000" {
		t.Errorf("Identity = %q", got)
	}
	if got := s.Age(s.Get(200)); got != 10000*time.Second {
		t.Errorf("Age = %v, want 2h46m40s", got)
	}
	if got := s.CgroupMembers("/user.slice/user-1000.slice/user@1000.service/app.slice/openclaw-gateway.service"); len(got) != 7 {
		t.Errorf("CgroupMembers = %v, want the 7 live processes of the unit", got)
	}
}

// TestReadSnapshotLive reads the real /proc and checks what the test knows
// about itself against the kernel.
func TestReadSnapshotLive(t *testing.T) {
	s, err := ReadSnapshot(DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	self := s.Get(os.Getpid())
	if s.Self != os.Getpid() || self == nil {
		t.Fatalf("Self = %d, own entry %v", s.Self, self)
	}
	// The stat pass reads no owner: nobody's until asked.
	if self.PPID != os.Getppid() || self.UID != NoUID {
		t.Errorf("self after the stat pass: ppid %d uid %d, want %d and none read (%d)", self.PPID, self.UID, os.Getppid(), NoUID)
	}
	if got := s.Owner(self); got != uint32(os.Geteuid()) {
		t.Errorf("Owner(self) = %d, want %d", got, os.Geteuid())
	}
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	var want Process
	if err := ParseStat(raw, uint64(os.Getpagesize()), &want); err != nil {
		t.Fatal(err)
	}
	if self.StartTicks != want.StartTicks || self.PGID != want.PGID || self.SID != want.SID {
		t.Errorf("self start %d pgid %d sid %d, want %d %d %d", self.StartTicks, self.PGID, self.SID, want.StartTicks, want.PGID, want.SID)
	}
	argv := s.Cmdline(self)
	if len(argv) == 0 || argv[0] != os.Args[0] {
		t.Errorf("Cmdline = %q, want argv[0] %q", argv, os.Args[0])
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	if s.BootID != strings.TrimSpace(string(boot)) {
		t.Errorf("BootID = %q", s.BootID)
	}
	if s.ClockTicks != 100 {
		t.Logf("USER_HZ is %d on this machine", s.ClockTicks)
	}
	if got := s.Get(1); got == nil || got.PID != 1 {
		t.Errorf("PID 1 missing from the live table")
	}
}

func TestReadSnapshotMissingRoot(t *testing.T) {
	if _, err := ReadSnapshot(t.TempDir() + "/nope"); err == nil {
		t.Fatal("no error for a missing proc root")
	}
}

// startExeced starts child and returns once its new image is laid out.
// exec.Cmd.Start returns when execve has closed the close-on-exec pipe it
// watches, which the kernel does before it writes the new argv and
// environment (fs/binfmt_elf.c: begin_new_exec, then create_elf_tables);
// a read in between finds both empty.
func startExeced(t *testing.T, child *exec.Cmd) {
	t.Helper()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	path := DefaultProcRoot + "/" + strconv.Itoa(child.Process.Pid) + "/cmdline"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: no command line after 10 s", child.Process.Pid)
		}
	}
}

// KeepEnv keeps only the named variables of the environments read; a
// lookup of another name reads the environment again and still answers
// right. The control: without KeepEnv the whole environment is kept.
func TestKeepEnv(t *testing.T) {
	child := exec.Command("sleep", "60")
	child.Env = []string{"REAPER_KEEP_A=kept", "REAPER_KEEP_B=not kept", "PATH=/usr/bin:/bin"}
	startExeced(t, child)
	for _, keep := range []bool{false, true} {
		s, err := ReadSnapshot(DefaultProcRoot)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if keep {
			s.KeepEnv([]string{"REAPER_KEEP_A"})
		}
		p := s.Get(child.Process.Pid)
		if v, ok := s.Getenv(p, "REAPER_KEEP_A"); !ok || v != "kept" {
			t.Errorf("keep %v: REAPER_KEEP_A = %q %v", keep, v, ok)
		}
		held := p.view().environ
		if strings.Contains(held, "REAPER_KEEP_B") == keep || !strings.Contains(held, "REAPER_KEEP_A=kept") {
			t.Errorf("keep %v: the snapshot holds %q", keep, held)
		}
		if v, ok := s.Getenv(p, "REAPER_KEEP_B"); !ok || v != "not kept" {
			t.Errorf("keep %v: REAPER_KEEP_B = %q %v: a name not kept must be read again", keep, v, ok)
		}
	}
}

// DropDetails lets go of what was read for the processes it does not keep,
// and a later ask reads them again: nothing answers from a dropped detail.
func TestDropDetails(t *testing.T) {
	s, self, other := withChild(t, "REAPER_KEEP_A=kept")
	s.Cmdline(self)
	s.Getenv(other, "REAPER_KEEP_A")
	s.Cmdline(other)
	s.DropDetails(func(p *Process) bool { return p == self })
	if self.details == nil || other.details != nil {
		t.Fatalf("kept %v, dropped %v: want self's kept and the other's dropped", self.details != nil, other.details == nil)
	}
	if argv := s.Cmdline(other); len(argv) != 2 || argv[0] != "sleep" {
		t.Errorf("the dropped command line read again: %q", argv)
	}
	if v, ok := s.Getenv(other, "REAPER_KEEP_A"); !ok || v != "kept" {
		t.Errorf("the dropped environment read again: %q %v", v, ok)
	}
}

// A command line or environment of any size is read up to MaxDetail and
// no further: the process says it was read in part, an environment keeps
// only its whole entries (a marker after the cut is not taken cut short),
// and the lookups past the bound find nothing. The control: the same
// process shape under the bound is read whole and says nothing.
func TestDetailsReadUpToTheBound(t *testing.T) {
	big := strings.Repeat("a", 100<<10) // one argument under MAX_ARG_STRLEN (128 KiB)
	for _, tt := range []struct {
		name    string
		args    []string
		env     []string
		inPart  string
		marker  bool // REAPER_MARK is readable
		cmdline int  // the most of the command line read, in bytes
	}{
		{"small (control)", []string{"60"}, []string{"REAPER_MARK=12345"}, "", true, 100},
		{"huge command line", []string{"60", big, big}, []string{"REAPER_MARK=12345"}, "its command line is longer than 64 KiB and was read in part", true, MaxDetail},
		{"huge environment", []string{"60"}, []string{"PAD=" + big, "REAPER_MARK=12345"}, "its environment is longer than 64 KiB and was read in part", false, 100},
		{"both", []string{"60", big}, []string{"PAD=" + big[:MaxDetail-20], "REAPER_MARK=12345"}, "its command line and environment are longer than 64 KiB and were read in part", false, MaxDetail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A shell that waits: its extra arguments are $0, $1, ….
			child := exec.Command("sh", append([]string{"-c", "sleep 60; :"}, tt.args...)...)
			child.Env = tt.env
			startExeced(t, child)
			s, err := ReadSnapshot(DefaultProcRoot)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p := s.Get(child.Process.Pid)
			if p == nil {
				t.Fatal("the child is not in the table")
			}
			if got := s.ReadInPart(p); got != tt.inPart {
				t.Errorf("ReadInPart = %q, want %q", got, tt.inPart)
			}
			if n := len(s.CommandLine(p)); n > tt.cmdline {
				t.Errorf("the command line read is %d bytes, want at most %d", n, tt.cmdline)
			}
			v, ok := s.Getenv(p, "REAPER_MARK")
			if ok != tt.marker || ok && v != "12345" {
				t.Errorf("REAPER_MARK = %q %v, want found %v (whole, never cut short)", v, ok, tt.marker)
			}
		})
	}
}

// A process whose command line reads empty, and which is neither a kernel
// thread nor a zombie nor exiting, was caught in the middle of execve:
// nothing it holds was seen, and it says so. The controls: the same
// process with its command line, a zombie, and one exiting (PF_EXITING:
// past exit_mm, about to be gone) say nothing.
func TestEmptyCommandLineIsReadInPart(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(fixtureRoot)); err != nil {
		t.Fatal(err)
	}
	stat, _ := os.ReadFile(root + "/600/stat")
	exiting := strings.Replace(string(stat), " 4194560 ", " 4194564 ", 1) // flags | PF_EXITING
	for _, tt := range []struct {
		name    string
		pid     int
		cmdline string
		stat    string
		want    string
	}{
		{"mid-exec", 600, "", string(stat), "its command line and environment read empty (it was in the middle of execve)"},
		{"whole (control)", 600, "/bin/bash\x00-c\x00npm test\x00", string(stat), ""},
		{"zombie (control)", 202, "", "", ""},
		{"exiting (control)", 600, "", exiting, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(root+"/"+strconv.Itoa(tt.pid)+"/cmdline", []byte(tt.cmdline), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.stat != "" {
				os.WriteFile(root+"/"+strconv.Itoa(tt.pid)+"/stat", []byte(tt.stat), 0o644)
			}
			s, err := ReadSnapshot(root)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := s.ReadInPart(s.Get(tt.pid)); got != tt.want {
				t.Errorf("ReadInPart = %q, want %q", got, tt.want)
			}
		})
	}
}

// capDetail cuts an environment at its last whole entry, a command line at
// the bound.
func TestCapDetail(t *testing.T) {
	env := []byte(strings.Repeat("A=b\x00", MaxDetail/4) + "MARK=123456\x00")
	got, cut := capDetail(env, detailEnviron)
	if !cut || len(got) > MaxDetail || got[len(got)-1] != 0 || bytes.Contains(got, []byte("MARK=")) {
		t.Errorf("environment: cut %v, %d bytes, ends %q", cut, len(got), got[max(0, len(got)-8):])
	}
	got, cut = capDetail(env, detailCmdline)
	if !cut || len(got) != MaxDetail {
		t.Errorf("command line: cut %v, %d bytes", cut, len(got))
	}
	if got, cut := capDetail([]byte("a\x00b\x00"), detailEnviron); cut || string(got) != "a\x00b\x00" {
		t.Errorf("a small environment: %q cut %v", got, cut)
	}
}

func TestParseProcessLimit(t *testing.T) {
	limits := "Limit                     Soft Limit           Hard Limit           Units     \nMax cpu time              unlimited            unlimited            seconds   \nMax processes             4096                 63432                processes \n"
	if n := parseProcessLimit([]byte(limits)); n != 4096 {
		t.Errorf("%d, want the soft limit 4096", n)
	}
	if n := parseProcessLimit([]byte(strings.Replace(limits, "4096 ", "unlimited ", 1))); n != 0 {
		t.Errorf("unlimited: %d, want 0", n)
	}
}

// A frozen table answers from what is loaded and reads nothing: a
// detail loaded before answers as before; one not loaded is a miss —
// under test a panic — counted, answered empty, and the process is one
// nothing is acted on (ReadInPart). The control: thawed, the same detail
// is read.
func TestFreeze(t *testing.T) {
	s, self, other := withChild(t)
	s.Load([]*Process{self}, true)
	reads := s.Reads()
	thaw := s.Freeze()
	if argv := s.Cmdline(self); len(argv) == 0 || s.UID(self) != uint32(os.Getuid()) {
		t.Errorf("a loaded detail, frozen: %q uid %d", argv, s.UID(self))
	}
	for _, ask := range []struct {
		name string
		read func()
	}{
		{"command line", func() { s.Cmdline(other) }},
		{"uid", func() { s.UID(other) }},
		{"environment", func() { s.Getenv(other, "PATH") }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a process not loaded, frozen: no panic under test", ask.name)
				}
			}()
			ask.read()
		}()
	}
	if s.Reads() != reads || s.Misses() != 3 {
		t.Errorf("frozen: %d reads, %d misses; want 0 and 3", s.Reads()-reads, s.Misses())
	}
	thaw()
	if argv := s.Cmdline(other); len(argv) != 2 || argv[0] != "sleep" {
		t.Errorf("control: thawed, the command line reads %q", argv)
	}
	if why := s.ReadInPart(other); !strings.Contains(why, "not read before the decision") {
		t.Errorf("a process missed while frozen: ReadInPart %q", why)
	}
}

// withChild starts a sleep with env (ended with the test) and reads the
// live table: the snapshot (closed with the test), this process's entry
// and the sleep's.
func withChild(t *testing.T, env ...string) (s *Snapshot, self, child *Process) {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Env = env
	startExeced(t, cmd)
	s, err := ReadSnapshot(DefaultProcRoot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, s.Get(os.Getpid()), s.Get(cmd.Process.Pid)
}
