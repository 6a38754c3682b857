package runtest

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/statedir"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// Testdata is the repository's testdata dir, wherever the test runs.
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// Fixture is the fixture machine's process table (testdata/proc).
func Fixture() string { return filepath.Join(Testdata(), "proc") }

// Policy is the fixture policy (testdata/policy/fixture.toml) for cs.
func Policy(t testing.TB, cs client.Set) *policy.Policy {
	t.Helper()
	pol, err := policy.Load(filepath.Join(Testdata(), "policy", "fixture.toml"), policy.Clients{Owners: cs.Owners(), Marks: cs.Marks()})
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// fake is an adapter with no state, whose one mark makes mcp-remote's
// wrapper an exec: what the run's set of clients holds is what the scan
// applies.
type fake struct{}

func (fake) Info() client.Info {
	return client.Info{Name: "fake", Title: "Fake", Owners: []string{"fake"},
		Marks: scan.Marks{Commands: []scan.CommandMark{{Cmdline: scan.MustPattern(`^npm exec mcp-remote`), Kind: scan.KindExec}}}}
}
func (fake) HomeDirs(string, int) []string                         { return nil }
func (fake) OwnDirs(func(string) string) []string                  { return nil }
func (fake) NamedDir(func(string) (string, bool)) (string, string) { return "", "" }
func (fake) IsStateDir(string) bool                                { return false }
func (fake) Read(dir string) *statedir.Config                      { return &statedir.Config{Head: statedir.Head{Dir: dir}} }
func (fake) Judge(c *statedir.Config, uid uint32, _ *platform.Snapshot) (scan.Evidence, []error, []string) {
	return statedir.JudgeConfig(c, uid)
}

// FakeSet is a set of clients holding the one fake adapter.
var FakeSet = client.NewSet(client.New[statedir.Config](fake{}))
