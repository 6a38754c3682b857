package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/skips"
)

// notifications is a freedesktop notification service on a test's own
// session bus: what it was asked to show.
type notifications struct {
	mu   sync.Mutex
	sent [][2]string
}

// Notify is org.freedesktop.Notifications.Notify.
func (n *notifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.sent = append(n.sent, [2]string{summary, body})
	return uint32(len(n.sent)), nil
}

func (n *notifications) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.sent)
}

// sessionBus starts a private session bus (dbus-daemon) with a
// notification service on it, and returns its address.
func sessionBus(t *testing.T) (string, *notifications) {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		skips.Skip(t, "no dbus-daemon here (apt-get install dbus-daemon): the desktop notifications are tested on a private session bus")
	}
	if _, err := user.LookupId(strconv.Itoa(os.Getuid())); err != nil {
		// dbus-daemon refuses to start without it ("Could not get
		// password database information for UID of current process").
		skips.Skip(t, "this uid has no passwd entry, without which dbus-daemon does not start: the desktop notifications are tested on a private session bus")
	}
	addr := "unix:path=" + filepath.Join(t.TempDir(), "bus")
	cmd := exec.Command(daemon, "--session", "--nofork", "--nopidfile", "--address="+addr, "--print-address=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n') // printed once it listens
	if err != nil {
		t.Fatalf("dbus-daemon: %v", err)
	}
	conn, err := dbus.Connect(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	n := &notifications{}
	if err := conn.Export(n, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("the notification service's name: %v %v", reply, err)
	}
	return strings.TrimSpace(line), n
}

// TestWatchDesktopNotify: a user's watch with --notify, on a session bus with a
// notification service, tells of the one tree it ended — one
// notification, naming it — and then of nothing through the idle passes
// that follow. The control: the orphan lived on before the watch started.
func TestWatchDesktopNotify(t *testing.T) {
	if isolated(t) {
		return
	}
	clitest.BecomeSubreaper(t)
	addr, service := sessionBus(t)
	mark := "watch-notify-" + clitest.Mark
	pol := watchPolicy(t, "", mark, `"owner-dead"`, "min_age = \"0s\"")
	owner, child := ownerWithChild(t, mark)
	syscall.Kill(owner, syscall.SIGKILL)
	clitest.WaitFor(t, func() bool { return !clitest.Alive(owner) }, "the owner gone")
	if !clitest.Alive(child) {
		t.Fatalf("control: the orphan %d died with no reaper", child)
	}
	prom := filepath.Join(t.TempDir(), "reaper.prom")
	w := clitest.StartWatchEnv(t, []string{"DBUS_SESSION_BUS_ADDRESS=" + addr}, pol, "--notify", "--backstop", "1s", "--metrics", prom)
	clitest.WaitFor(t, func() bool { return !clitest.Alive(child) }, "the orphan reaped")
	clitest.WaitFor(t, func() bool { return service.count() >= 1 }, "the notification")
	// Idle passes: five backstops after the one that told.
	passes := func() int {
		text, _ := os.ReadFile(prom)
		for _, line := range strings.Split(string(text), "\n") {
			if rest, ok := strings.CutPrefix(line, `reaper_watch_passes_total{trigger="backstop"} `); ok {
				n, _ := strconv.Atoi(rest)
				return n
			}
		}
		return 0
	}
	after := passes()
	clitest.WaitFor(t, func() bool { return passes() >= after+5 }, "five idle passes")
	service.mu.Lock()
	defer service.mu.Unlock()
	if len(service.sent) != 1 {
		t.Fatalf("%d notifications, want 1: %q\n%s", len(service.sent), service.sent, w.Stderr)
	}
	s := service.sent[0]
	if !strings.HasPrefix(s[0], "reaper ended 1 leftover tree (") || !strings.Contains(s[1], fmt.Sprintf("mcp %d (npm exec mcp-remote https://watch-notify-", child)) {
		t.Errorf("the notification %q: want one ended tree, %d", s, child)
	}
	t.Logf("one notification: %q / %q", s[0], s[1])
}
