package all

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/policy"
)

// The policy examples in docs/policy.md load with the shipped clients:
// each ```toml block, with `version = 1` where it has none. A key renamed
// in the code and not in the docs fails here.
func TestDocExamplesLoad(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```toml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("%d toml blocks in docs/policy.md", len(blocks))
	}
	for i, blk := range blocks {
		blk, _, _ = strings.Cut(blk, "```")
		if !strings.Contains(blk, "version =") {
			blk = "version = 1\n" + blk
		}
		if _, err := policy.Parse(fmt.Sprintf("docs/policy.md block %d", i+1), []byte(blk), clients); err != nil {
			t.Errorf("%v\n%s", err, blk)
		}
	}
}

// A [[client]] may not take a shipped client's name, even one no owner
// carries (OpenClaw's is "openclaw", its owners "openclaw-gateway" and
// "codex-app-server"): its session dirs would be read by that client. The
// control: a name of its own loads.
func TestDeclaredClientNotShipped(t *testing.T) {
	const pol = `version = 1
[[client]]
name = %q
command = 'x'
session_files = "~/.x/sessions/*.json"
session_env = "X_SESSION"
session_id = "id"
`
	if _, err := policy.Parse("p.toml", []byte(fmt.Sprintf(pol, "openclaw")), clients); err == nil || !strings.Contains(err.Error(), `p.toml:3: client "openclaw" is already an owner's or a shipped client's name`) {
		t.Errorf("a shipped client's name: %v", err)
	}
	if _, err := policy.Parse("p.toml", []byte(fmt.Sprintf(pol, "agentx")), clients); err != nil {
		t.Errorf("control, a name of its own: %v", err)
	}
}

// docs/clients.md names every client of the list and every state dir it
// keeps in a home (client.Info.Homes): the list is the code's, and a new
// adapter without its page fails here.
func TestDocsNameEveryClient(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, c := range Clients.All() {
		info := c.Info()
		if !strings.Contains(doc, info.Title) {
			t.Errorf("docs/clients.md does not name %s", info.Title)
		}
		for _, h := range info.Homes {
			if !strings.Contains(doc, "`"+h+"`") && !strings.Contains(doc, "`"+h+"/") {
				t.Errorf("docs/clients.md does not name %s's state dir %s", info.Title, h)
			}
		}
	}
}
