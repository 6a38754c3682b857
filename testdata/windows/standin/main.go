// Command standin is a client-shaped Windows program for the tests under
// wine (scripts/windows-e2e.sh): "standin client TAG" records a session as
// Claude Code does on Windows — <config>/sessions/<pid>.json, <config>
// being CLAUDE_CONFIG_DIR or %USERPROFILE%\.claude, procStart its
// creation time as CIM's CreationDate.Ticks — starts two stdio servers
// like itself carrying the session's id (CLAUDECODE=1,
// CLAUDE_CODE_SESSION_ID), the first of which starts a child, prints their
// pids and its own, and waits to be killed; the servers and the child wait
// an hour. "standin client TAG spawning" starts one server instead that
// starts a leaf every 20 ms while it lives. "standin app TAG PACKAGE
// SERVER" is an MSIX app's stand-in, run from a copy below
// WindowsApps\PACKAGE\: it makes the job AppInfo would
// (Container_PACKAGE-<its user's SID>), joins it, and starts SERVER (a
// copy of itself elsewhere) as a server, which is born in the job. Every
// argv carries TAG, so a test's rule names its processes alone.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: standin client|server|leaf TAG [child]")
		os.Exit(2)
	}
	mode, tag := os.Args[1], os.Args[2]
	switch mode {
	case "app":
		if len(os.Args) < 5 {
			fmt.Fprintln(os.Stderr, "usage: standin app TAG PACKAGE SERVER")
			os.Exit(2)
		}
		if err := container(os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		c := exec.Command(os.Args[4], "server", tag, "mcp-server-standin-app")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("server", c.Process.Pid)
		fmt.Println("client", os.Getpid())
	case "client":
		servers := [][]string{{"server", tag, "mcp-server-standin-one", "child"}, {"server", tag, "mcp-server-standin-two"}}
		if len(os.Args) > 3 && os.Args[3] == "spawning" {
			servers = [][]string{{"spawner", tag, "mcp-server-standin-spawner"}}
		}
		id, err := record()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, a := range servers {
			c := exec.Command(os.Args[0], a...)
			c.Env = append(os.Environ(), "CLAUDECODE=1", "CLAUDE_CODE_SESSION_ID="+id)
			if err := c.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Println("server", c.Process.Pid)
		}
		fmt.Println("client", os.Getpid())
	case "spawner":
		// A server that starts a leaf every 20 ms for as long as it lives:
		// a tree that forks while it is being ended.
		for {
			c := exec.Command(os.Args[0], "leaf", tag)
			if err := c.Start(); err == nil {
				fmt.Println("leaf", c.Process.Pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	case "server":
		if len(os.Args) > 4 && os.Args[4] == "child" {
			c := exec.Command(os.Args[0], "leaf", tag)
			if err := c.Start(); err == nil {
				fmt.Println("leaf", c.Process.Pid)
			}
		}
	}
	time.Sleep(time.Hour)
}

// container makes the job an MSIX app's container is, named as AppInfo
// names it, and puts this process in it: whatever it starts is born
// there.
func container(pkg string) error {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	name, err := windows.UTF16PtrFromString("Container_" + pkg + "-" + u.User.Sid.String())
	if err != nil {
		return err
	}
	j, err := windows.CreateJobObject(nil, name)
	if err != nil {
		return fmt.Errorf("CreateJobObject: %w", err)
	}
	if err := windows.AssignProcessToJobObject(j, windows.CurrentProcess()); err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return nil // the handle stays open while the app lives
}

// record writes this process's session file where Claude Code keeps it
// and returns the session's id.
func record() (string, error) {
	dir := os.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(os.Getenv("USERPROFILE"), ".claude")
	}
	var created, exit, kernel, user syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err == nil {
		err = syscall.GetProcessTimes(h, &created, &exit, &kernel, &user)
	}
	if err != nil {
		return "", fmt.Errorf("GetProcessTimes: %w", err)
	}
	// CreationDate.Ticks: 100 ns since 0001-01-01 in local time, to the
	// microsecond (CIM's datetime).
	at := time.Unix(0, created.Nanoseconds())
	_, zone := at.Zone()
	ticks := (at.UnixMicro()+int64(zone)*1e6)*10 + 621355968000000000
	id := fmt.Sprintf("standin-%d-%d", os.Getpid(), time.Now().UnixNano())
	cwd, _ := os.Getwd()
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "sessionId": id, "cwd": cwd, "startedAt": time.Now().UnixMilli(),
		"procStart": fmt.Sprint(ticks), "kind": "interactive", "entrypoint": "cli"})
	sessions := filepath.Join(dir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		return "", err
	}
	return id, os.WriteFile(filepath.Join(sessions, fmt.Sprintf("%d.json", os.Getpid())), b, 0o600)
}
