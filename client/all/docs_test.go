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
// adapter without its page fails here. The glossary's list names them
// all too.
func TestDocsNameEveryClient(t *testing.T) {
	g, err := os.ReadFile(filepath.Join("..", "..", "docs", "glossary.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, entry, _ := strings.Cut(string(g), "**client** —")
	entry, _, _ = strings.Cut(entry, "\n\n")
	entry = strings.Join(strings.Fields(entry), " ")
	for _, c := range Clients.All() {
		if title := c.Info().Title; !strings.Contains(entry, title) {
			t.Errorf("docs/glossary.md's client entry does not name %s", title)
		}
	}
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

// docs/policy.md's owner key names every owner name a shipped client's
// findings carry, and its [[owner]] section every client by title: the
// lists are the code's (they had named 7 owners and 4 clients of 12).
func TestPolicyDocNamesEveryOwner(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "policy.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, ownerRow, _ := strings.Cut(doc, "| `owner` | list of owner names |")
	ownerRow, _, _ = strings.Cut(ownerRow, "\n")
	for _, o := range Clients.Owners() {
		if !strings.Contains(ownerRow, "`"+o+"`") {
			t.Errorf("docs/policy.md's owner row does not name %q", o)
		}
	}
	_, section, _ := strings.Cut(doc, "## `[[owner]]`: a supervisor")
	section, _, _ = strings.Cut(section, "| key |")
	section = strings.Join(strings.Fields(section), " ")
	for _, c := range Clients.All() {
		if info := c.Info(); info.Name != "openclaw" && !strings.Contains(section, info.Title) {
			t.Errorf("docs/policy.md's [[owner]] section does not name %s among the clients that need no entry", info.Title)
		}
	}
}

// The example policy's header names every shipped client, and its
// agent-client-dead and agent-client-mcp rules each agent CLI's own owner
// name (OpenClaw's have rules of their own): a client added without its
// line in both fails here.
func TestExamplePolicyNamesEveryClient(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "packaging", "policy.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	header, _, _ := strings.Cut(doc, "version = 1")
	header = strings.Join(strings.Fields(strings.ReplaceAll(header, "#", " ")), " ")
	rules := map[string]string{}
	for _, name := range []string{"agent-client-dead", "agent-client-mcp"} {
		_, rule, _ := strings.Cut(doc, `name = "`+name+`"`)
		rules[name], _, _ = strings.Cut(rule, "[[rule]]")
	}
	for _, c := range Clients.All() {
		info := c.Info()
		if !strings.Contains(header, info.Title) {
			t.Errorf("the example policy's header does not name %s", info.Title)
		}
		if info.Name == "openclaw" {
			continue
		}
		for name, rule := range rules {
			if o := info.Owners[0]; !strings.Contains(rule, `"`+o+`"`) {
				t.Errorf("the example policy's %s rule does not name %s's owner %q", name, info.Title, o)
			}
		}
	}
}
