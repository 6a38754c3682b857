package policy

import (
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/scan"

	"github.com/orphanreaper/reaper/platform"
)

const evidencePolicy = `version = 1
[defaults]
min_age = "0s"

[[rule]]
name = "dead-client"
when = ["owner-dead"]
owner = ["opencode"]
user = ["@evidence"]
action = "terminate"

[[rule]]
name = "shape"
when = ["reparented"]
cmdline = 'named-tool'
user = ["@evidence"]
action = "terminate"

[[rule]]
name = "no-list"
when = ["owner-dead"]
action = "terminate"
`

// "@evidence" in a rule's user list reaches the users the finding's own
// evidence speaks for, and no one else: a root reaper (here uid 1000 acts
// for itself) may signal uid 1001's tree that 1001's own marker proves
// orphaned, but not uid 1001's tree that only looks like one. A rule with
// no user list refuses the proven tree, naming the fix.
func TestEvidenceUser(t *testing.T) {
	pol, err := Parse("evidence.toml", []byte(evidencePolicy), testClients)
	if err != nil {
		t.Fatal(err)
	}
	of := func(uid uint32, p platform.Process) platform.Process { p.UID = uid; return p }
	proven := of(1001, proc(100, 1, []string{"node", "server.js"}, []string{"OPENCODE_PID=4242"}, "/", 1000))
	proven.PGID = 4242 // the dead opencode's group
	shape := of(1001, proc(101, 1, []string{"named-tool"}, nil, "/", 1000))
	pl, snap := planAs(pol, ModeDryRun, 0, 0, proven, shape) // as root: a user's reaper reaches no other user's tree
	check(t, pl, want{100, "dead-client", Terminate, Planned, ""})
	if f := pl.Items[0].Finding; !f.SpokenFor(snap, 1001) || f.SpokenFor(snap, 1002) {
		t.Errorf("speakers %v, want uid 1001's own marker", f.Speakers)
	}
	// A kernel fact about the root's own process (abandoned) speaks for
	// the root's user, and for no one else.
	kernel := scan.Finding{Root: snap.Get(101), RootSpeaks: true}
	if !kernel.SpokenFor(snap, 1001) || kernel.SpokenFor(snap, 1002) || kernel.SpokenFor(snap, 0) {
		t.Error("a kernel fact about uid 1001's process speaks for 1001 alone")
	}
	if pl.Unmatched != 1 {
		t.Errorf("unmatched %d, want uid 1001's look-alike (no evidence of its user's)", pl.Unmatched)
	}
	if len(pl.UnmatchedFindings) != 1 || pl.UnmatchedFindings[0].Root.PID != 101 {
		t.Fatalf("unmatched %v, want 101", pl.UnmatchedFindings)
	}
	if why := pol.WhyNot(snap, pl.UnmatchedFindings[0]); !strings.Contains(why, "no evidence of that user's proves the tree") {
		t.Errorf("why not: %q", why)
	}

	// The control: without "@evidence", the same proven tree is another
	// user's, refused with the fix named — by the user's number where the
	// host has no name for it, by the name where it has one.
	names := userNames
	t.Cleanup(func() { userNames = names })
	userNames = func(uint32) string { return "" }
	noList, err := Parse("evidence.toml", []byte(strings.Replace(evidencePolicy, `user = ["@evidence"]`+"\naction = \"terminate\"\n\n[[rule]]\nname = \"shape\"", "action = \"terminate\"\n\n[[rule]]\nname = \"shape\"", 1)), testClients)
	if err != nil {
		t.Fatal(err)
	}
	pl, _ = planAs(noList, ModeDryRun, 0, 0, proven)
	check(t, pl, want{100, "dead-client", Terminate, Refused, `and rule "dead-client" has no user list: add "1001" to its user list, or "@evidence"`})
	userNames = func(uid uint32) string { return map[uint32]string{1001: "runner"}[uid] }
	pl, _ = planAs(noList, ModeDryRun, 0, 0, proven)
	check(t, pl, want{100, "dead-client", Terminate, Refused, `pid 100 belongs to uid 1001 (runner), not the reaper's`})
	check(t, pl, want{100, "dead-client", Terminate, Refused, `add "runner" to its user list`})
}

// "@evidence" is for rules: a protect entry names processes, with no
// finding whose evidence could speak.
func TestEvidenceUserOnlyInRules(t *testing.T) {
	_, err := Parse("p.toml", []byte("version = 1\n[[protect]]\nname = \"x\"\nuser = [\"@evidence\"]\n"), testClients)
	if err == nil || !strings.Contains(err.Error(), "only a rule can name the users its evidence speaks for") {
		t.Fatalf("err %v", err)
	}
}
