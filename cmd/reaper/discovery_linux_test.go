package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/clitest"
)

// A live gateway whose trees are all in order is not among the owners the
// scan meets, yet its state dir (OPENCLAW_STATE_DIR, outside any home)
// holds what the advice needs: discovery finds it by the gateway's process
// title. The state dir here holds a lease file that does not parse, so the
// report's errors show whether it was read. The control: the same process
// under another name is not a gateway, and the dir is not read.
func TestDiscoveryFindsGatewayByTitle(t *testing.T) {
	clitest.RequireRoot(t)
	for _, tt := range []struct {
		name string
		read bool
	}{{"openclaw-gateway", true}, {"sleep-gateway", false}} {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			os.MkdirAll(filepath.Join(state, "acpx"), 0o700)
			os.WriteFile(filepath.Join(state, "acpx", "process-leases.json"), []byte("not json"), 0o600)
			bin := filepath.Join(t.TempDir(), tt.name)
			if err := os.Symlink("/bin/sleep", bin); err != nil {
				t.Fatal(err)
			}
			gw := exec.Command(bin, "60")
			gw.Env = []string{"OPENCLAW_STATE_DIR=" + state}
			if err := gw.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { gw.Process.Kill(); gw.Wait() })
			clitest.WaitFor(t, func() bool {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(gw.Process.Pid) + "/comm")
				return strings.HasPrefix(string(b), tt.name[:min(len(tt.name), 15)])
			}, "the process title")
			r := clitest.RunReaper(t, []string{"XDG_CONFIG_HOME=" + t.TempDir()}, "scan", "--output", "json")
			var rep struct{ Errors []string }
			if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
				t.Fatalf("%v: %s", err, r.Stderr)
			}
			read := strings.Contains(strings.Join(rep.Errors, "\n"), state)
			if read != tt.read {
				t.Errorf("state dir read: %v, want %v (errors %q)", read, tt.read, rep.Errors)
			}
		})
	}
}
