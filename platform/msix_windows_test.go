package platform_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/orphanreaper/reaper/platform"
)

// The live containers: a job named as the AppInfo service names an MSIX
// app's container (Container_<package full name>-<the user's SID>), a
// process assigned to it, and the live table's Containers lists the job
// with that process as its member, without a package identity (it has
// none: this test binary is not packaged). The control: a job of the same
// shape named with another user's SID is not this user's container and is
// not listed.
func TestWindowsContainersLive(t *testing.T) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	sid := u.User.Sid.String()
	pkg := fmt.Sprintf("ReaperTest.P%d_1.0.%d.0_x64__reapertest00000", os.Getpid(), time.Now().UnixNano()%60000)
	mine, other := "Container_"+pkg+"-"+sid, "Container_"+pkg+"-S-1-5-21-1-2-3-4242"
	jobs := map[string]windows.Handle{}
	for _, name := range []string{mine, other} {
		n, _ := windows.UTF16PtrFromString(name)
		j, err := windows.CreateJobObject(nil, n)
		if err != nil {
			t.Fatalf("CreateJobObject(%s): %v", name, err)
		}
		t.Cleanup(func() { windows.CloseHandle(j) })
		jobs[name] = j
	}
	child := exec.Command(os.Args[0], "-test.run", "^$")
	child.Env = append(os.Environ(), envWinHelper+"=child")
	up, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	if _, err := up.Read(make([]byte, 8)); err != nil {
		t.Fatalf("the child said nothing: %v", err)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(child.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(jobs[mine], h); err != nil {
		t.Fatalf("AssignProcessToJobObject: %v", err)
	}
	s, err := platform.ReadSnapshot("")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Containers()
	if err != nil {
		t.Fatalf("Containers: %v", err)
	}
	var found *platform.Container
	for i := range cs {
		switch cs[i].Job {
		case mine:
			found = &cs[i]
		case other:
			t.Errorf("another user's container %s is listed", other)
		}
	}
	if found == nil {
		t.Fatalf("the container %s is not listed (listed: %d)", mine, len(cs))
	}
	if found.Package != pkg {
		t.Errorf("its package %q, want %q", found.Package, pkg)
	}
	if len(found.Members) != 1 || found.Members[0].PID != child.Process.Pid {
		t.Fatalf("its members %+v, want the child %d alone", found.Members, child.Process.Pid)
	}
	m := found.Members[0]
	if m.Unread || m.Package != "" || found.Own(m) || !strings.HasSuffix(strings.ToLower(m.Image), ".exe") {
		t.Errorf("the member %+v: want it read, with no package identity, not the app's own, its image an .exe", m)
	}
}
