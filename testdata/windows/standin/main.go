// Command standin is a client-shaped Windows program for the tests under
// wine (scripts/wine-e2e.sh): "standin client TAG" starts two stdio
// servers like itself, the first of which starts a child, prints their
// pids and its own, and waits to be killed; the servers and the child wait
// an hour. "standin client TAG spawning" starts one server instead that
// starts a leaf every 20 ms while it lives. Every argv carries TAG, so a
// test's rule names its processes alone.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: standin client|server|leaf TAG [child]")
		os.Exit(2)
	}
	mode, tag := os.Args[1], os.Args[2]
	switch mode {
	case "client":
		servers := [][]string{{"server", tag, "mcp-server-standin-one", "child"}, {"server", tag, "mcp-server-standin-two"}}
		if len(os.Args) > 3 && os.Args[3] == "spawning" {
			servers = [][]string{{"spawner", tag, "mcp-server-standin-spawner"}}
		}
		for _, a := range servers {
			c := exec.Command(os.Args[0], a...)
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
