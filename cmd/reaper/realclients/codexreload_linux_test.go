package realclients

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/internal/clitest"
	"github.com/orphanreaper/reaper/internal/realclients"
)

// TestRealCodexAppServerReload: Codex 0.169.0's app-server on stdio, as
// OpenClaw's plugin and the IDEs drive it, with a thread whose one stdio
// server is then edited in config.toml and reloaded
// (config/mcpServer/reload). Codex kills the replaced copy itself within
// the reload (its old copy gone: the check that this release does not
// leak), and under the live app-server a reap with the example policy,
// confined to the test, plans nothing — before the reload and after it —
// and the scan gives no batch advice (one copy, one loaded thread).
func TestRealCodexAppServerReload(t *testing.T) {
	mods := requireClients(t)
	clitest.BecomeSubreaper(t)
	mark := "cxrmark" + strings.ReplaceAll(clitest.Mark, "-", "x")
	home, work := t.TempDir(), t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	os.MkdirAll(codexHome, 0o700)
	script := filepath.Join(clitest.Root(), "testdata", "clients", "stubborn-mcp.mjs")
	config := func(version string) {
		toml := fmt.Sprintf("model = \"m\"\nmodel_provider = \"mock\"\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\nwire_api = \"responses\"\nenv_key = \"OPENAI_API_KEY\"\n"+
			"[projects.%q]\ntrust_level = \"trusted\"\n[mcp_servers.edited]\ncommand = \"/usr/bin/node\"\nargs = [%q, \"--mcp-edited\", %q, %q]\n", work, script, mark, version)
		if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config("v1")
	cmd := exec.Command("node", filepath.Join(mods, "@openai", "codex", "bin", "codex.js"), "app-server")
	cmd.Dir, cmd.Env = work, realclients.Env(home, "CODEX_HOME="+codexHome, "OPENAI_API_KEY=test-key")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		realclients.KillOurs(mark)
	})
	go io.Copy(io.Discard, bufio.NewReader(out))
	id := 0
	send := func(method string, params any) {
		id++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		fmt.Fprintf(in, "%s\n", b)
	}
	copies := func(version string) []int {
		var pids []int
		for _, pid := range realclients.MarkedPIDs(mark) {
			if strings.HasSuffix(clitest.CmdlineOf(pid), mark+" "+version) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(clientDeadline()); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within the deadline; marked %v", what, realclients.MarkedPIDs(mark))
			}
		}
	}
	send("initialize", map[string]any{"clientInfo": map[string]any{"name": "reaper-test", "version": "1"}})
	fmt.Fprintf(in, `{"jsonrpc":"2.0","method":"initialized","params":{}}`+"\n")
	send("thread/start", map[string]any{"cwd": work})
	waitFor("the thread's server", func() bool { return len(copies("v1")) == 1 })
	old := copies("v1")[0]
	t.Logf("codex app-server %d: the thread's server %d (parent %d, group %d)", cmd.Process.Pid, old, clitest.ParentOf(old), clitest.PgidOf(old))
	reapLive(t, mark, "codex app-server, a thread loaded")

	config("v2")
	send("config/mcpServer/reload", map[string]any{})
	waitFor("the reloaded server", func() bool { return len(copies("v2")) == 1 })
	time.Sleep(2 * time.Second)
	t.Logf("reloaded: the new copy %v; the old copy %d: state %q", copies("v2"), old, clitest.StateOf(old))
	if st := clitest.StateOf(old); st != "" && st != "Z" {
		t.Errorf("codex 0.169.0 left the replaced copy %d running after the reload", old)
	}
	reapLive(t, mark, "codex app-server, after a reload")
	// One copy for its one loaded thread, by the log store 0.169.0 wrote:
	// no batch to advise about.
	var sr struct {
		Advice []struct{ ID, Evidence string } `json:"advice"`
	}
	scan := clitest.RunReaper(t, []string{"CODEX_HOME=" + codexHome}, "scan", "--output", "json", "--policy", clitest.ExamplePolicy(t, mark))
	json.Unmarshal([]byte(scan.Stdout), &sr)
	for _, a := range sr.Advice {
		if a.ID == "codex-mcp-batches" {
			t.Errorf("advice on a release that does not leak: %s", a.Evidence)
		}
	}
}
