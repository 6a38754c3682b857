package policy

import (
	"errors"
	"fmt"
	"os/user"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/scan"
)

// specExample is the policy of the format's first definition, verbatim.
const specExample = `version = 1

[defaults]
action = "report"        # report | terminate | kill
grace = "5s"             # terminate: SIGTERM (+SIGCONT), wait grace, then SIGKILL
min_age = "30s"          # never act on a process younger than this
max_actions = 100        # per run; past it, report only

[[owner]]                # how to recognise a live supervisor
name = "openclaw-gateway"
cmdline = '(^|/)openclaw-gateway\b|dist/(entry|index)\.js gateway'
ledger = ["~/.openclaw/reaper-ledger.json"]

[[subreaper]]            # besides PID 1 and systemd --user
cmdline = '^/sbin/tini'

[[rule]]                 # first matching rule wins, in file order
name = "orphaned-mcp"
when = ["reparented", "owner-dead", "run-done", "session-ended"]   # any of these
kind = ["mcp"]
cmdline = 'mcp-remote|@modelcontextprotocol/'
env = ["OPENCLAW_SHELL"]                 # NAME (present) or NAME=REGEX
cgroup = 'openclaw-gateway[^/]*\.service'
user = ["root"]
min_age = "2m"
min_rss = "50MiB"
action = "terminate"

[[protect]]              # never signalled, whatever a rule says
name = "login shells"
cmdline = '^-(bash|zsh|fish)$'
`

func TestParseSpecExample(t *testing.T) {
	p, err := Parse("spec.toml", []byte(specExample), testClients)
	if err != nil {
		t.Fatal(err)
	}
	if p.Defaults != (Defaults{Action: Report, Grace: 5 * time.Second, MinAge: 30 * time.Second, MaxActions: 100, StormRate: DefaultStormRate, StormFor: DefaultStormFor}) {
		t.Errorf("defaults %+v", p.Defaults)
	}
	if len(p.Owners) != 1 || p.Owners[0].Name != "openclaw-gateway" || p.Owners[0].Line != 9 {
		t.Errorf("owners %+v", p.Owners)
	}
	r := p.Rules[0]
	if r.Name != "orphaned-mcp" || r.Action != Terminate || r.MinAge != 2*time.Minute || r.MinRSS != 50<<20 || r.Line != 17 {
		t.Errorf("rule %+v", r)
	}
	if len(r.When) != 4 || r.When[1] != scan.OwnerDead || len(r.Kind) != 1 || r.Kind[0] != scan.KindMCP {
		t.Errorf("when %v kind %v", r.When, r.Kind)
	}
	if root := []uint32{0}; runtime.GOOS == "windows" {
		// Windows has no root: the example's user = ["root"] matches nobody there.
		if len(r.UIDs) != 0 {
			t.Errorf("uids %v: want none on Windows", r.UIDs)
		}
	} else if !slices.Equal(r.UIDs, root) {
		t.Errorf("uids %v, want root's", r.UIDs)
	}
	if len(r.Env) != 1 || r.Env[0].Name != "OPENCLAW_SHELL" || r.Env[0].Value != nil {
		t.Errorf("uids %v env %+v", r.UIDs, r.Env)
	}
	if len(p.Protect) != 1 || !p.Protect[0].Cmdline.MatchString("-bash") {
		t.Errorf("protect %+v", p.Protect)
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := Default(testClients)
	if p.Source != DefaultSource {
		t.Errorf("source %q", p.Source)
	}
	for _, r := range p.Rules {
		if r.Action != Report {
			t.Errorf("default rule %q acts (%s); the default policy only reports", r.Name, r.Action)
		}
	}
	if p.Defaults.Action != Report {
		t.Errorf("default action %s", p.Defaults.Action)
	}
	owner := p.Owners[0].Cmdline
	for _, argv := range []string{
		"openclaw-gateway",
		"/usr/bin/node /usr/lib/node_modules/openclaw/dist/entry.js gateway",
		"node /home/a/openclaw/dist/index.js gateway --port 18789",
		"node /usr/lib/node_modules/openclaw/openclaw.mjs gateway run",
	} {
		if !owner.MatchString(argv) {
			t.Errorf("default owner does not match %q", argv)
		}
	}
	for _, argv := range []string{"node server.js", "openclaw-gateway-helper", "vim gateway.txt"} {
		if owner.MatchString(argv) {
			t.Errorf("default owner matches %q", argv)
		}
	}
	if !p.Owners[0].Cgroup.MatchString("/user.slice/user-1000.slice/user@1000.service/app.slice/openclaw-gateway-work.service") {
		t.Error("default owner cgroup misses a profile unit")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // "LINE: substring"
	}{
		{"syntax", "version = 1\n[defaults\n", "2: expected '.' or ']' to end table name"},
		{"syntax mid-line", "version = 1\nx = = 1\n", "2: expected value"},
		{"no version", "[defaults]\naction = \"report\"\n", "0: version is missing"},
		{"version 2", "version = 2\n", "1: unsupported version 2"},
		{"unknown top-level key", "version = 1\nbogus = 3\n", `2: unknown key "bogus" at the top level`},
		{"[[rules]], the plural", "version = 1\n\n[[rules]]\nname = \"x\"\n", `3: unknown key "rules" at the top level`},
		{"unknown defaults key", "version = 1\n[defaults]\ngrace = \"1s\"\nspeed = 3\n", `4: unknown key "speed" in [defaults]`},
		{"unknown key in second rule", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\n\n[[rule]]\nname = \"b\"\nwhen = [\"reparented\"]\ncmdlin = \"x\"\n",
			`9: unknown key "cmdlin" in [[rule]]`},
		{"unknown reason", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\", \"orphaned\"]\n", `4: unknown reason "orphaned"`},
		{"information-only reason", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"pid-reused\"]\n", `4: unknown reason "pid-reused"`},
		{"unknown kind", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\nkind = [\"lsp\"]\n", `5: unknown kind "lsp"`},
		{"unknown action", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\naction = \"nuke\"\n", `5: unknown action "nuke"`},
		{"unknown owner", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"owner-dead\"]\nowner = [\"openclaw\"]\n", `5: unknown owner "openclaw" in rule "a"; owners are openclaw-gateway, codex-app-server`},
		{"bad default action", "version = 1\n[defaults]\naction = \"stop\"\n", `3: unknown action "stop"`},
		{"bad regex", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\ncmdline = 'mcp(('\n", "5: cmdline \"mcp((\": bad regex: missing closing ): `mcp((`"},
		{"bad env regex", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\nenv = ['X=(']\n", `5: env "X=(": bad regex`},
		{"bad env name", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\nenv = ['1X']\n", `5: env "1X": want NAME`},
		{"bad duration", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\nmin_age = \"2 minutes\"\n", `5: min_age "2 minutes" is not a duration`},
		{"bad grace", "version = 1\n[defaults]\ngrace = \"0s\"\n", "3: grace 0s"},
		{"bad size", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\nmin_rss = \"50 megs\"\n", "5: min_rss \"50 megs\" is not a size"},
		{"negative max_actions", "version = 1\n[defaults]\nmax_actions = -1\n", "3: max_actions must be a whole number"},
		{"when is a string", "version = 1\n[[rule]]\nname = \"a\"\nwhen = \"reparented\"\n", "4: when must be a list of strings"},
		{"rule without when", "version = 1\n[[rule]]\nname = \"a\"\n", `2: rule "a" needs when`},
		{"rule without name", "version = 1\n[[rule]]\nwhen = [\"reparented\"]\n", "2: [[rule]] needs a name"},
		{"rule with an empty name", "version = 1\n[[rule]]\nname = \"\"\nwhen = [\"reparented\"]\n", "3: [[rule]] name is empty"},
		{"rule with an empty when", "version = 1\n[[rule]]\nname = \"a\"\nwhen = []\n", `4: rule "a" has an empty when`},
		{"duplicate rule", "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\n[[rule]]\nname = \"a\"\nwhen = [\"untracked\"]\n", `6: rule "a" is defined twice (first on line 2)`},
		{"owner without cmdline", "version = 1\n[[owner]]\nname = \"gw\"\n", `2: [[owner]] "gw" needs a cmdline`},
		{"bad pid_env", "version = 1\n[[owner]]\nname = \"gw\"\ncmdline = \"gw\"\npid_env = \"A B\"\n", `5: pid_env "A B"`},
		{"empty protect", "version = 1\n[[protect]]\nname = \"p\"\n", `2: [[protect]] "p" matches nothing`},
		{"rule as a plain table", "version = 1\n[rule]\nname = \"a\"\n", "2: rule must be an array of tables"},
		{"subreaper without cmdline", "version = 1\n[[subreaper]]\n", "2: [[subreaper]] needs a cmdline"},
		{"msix without family", "version = 1\n[[msix]]\nname = \"app\"\n", `2: [[msix]] "app" needs a family`},
		{"msix with a bad family", "version = 1\n[[msix]]\nname = \"app\"\nfamily = \"(\"\n", `4: family "(": bad regex`},
		{"msix named as an owner", "version = 1\n[[owner]]\nname = \"gw\"\ncmdline = \"gw\"\n[[msix]]\nname = \"gw\"\nfamily = \".\"\n", `6: msix "gw" is already an owner's name`},
		{"msix with an unknown key", "version = 1\n[[msix]]\nname = \"app\"\nfamily = \".\"\nversion = \"1\"\n", `5: unknown key`},
		{"multi-line string does not confuse lines", "version = 1\n[[rule]]\nname = '''\nnot = a key\n'''\nwhen = [\"x\"]\n", `6: unknown reason "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("p.toml", []byte(tt.src), testClients)
			if err == nil {
				t.Fatal("no error")
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *policy.Error", err)
			}
			line, sub, _ := strings.Cut(tt.want, ": ")
			want := "p.toml:" + line + ": " + sub
			if line == "0" {
				want = "p.toml: " + sub
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error\n%v\nwant it to contain\n%s", err, want)
			}
		})
	}
}

func TestParseReportsEveryError(t *testing.T) {
	src := "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"nope\"]\naction = \"boom\"\n"
	_, err := Parse("p.toml", []byte(src), testClients)
	var es Errors
	if !errors.As(err, &es) || len(es) != 2 {
		t.Fatalf("got %v, want two errors", err)
	}
	if es[0].Line != 4 || es[1].Line != 5 {
		t.Errorf("lines %d, %d; want 4, 5", es[0].Line, es[1].Line)
	}
}

// A bad regex where a cmdline is required is one error, the regex's: not
// a second saying the cmdline is missing.
func TestBadRequiredRegexIsOneError(t *testing.T) {
	for _, src := range []string{
		"version = 1\n[[owner]]\nname = \"gw\"\ncmdline = '([a-z'\n",
		"version = 1\n[[subreaper]]\ncmdline = '([a-z'\n",
		"version = 1\n[[protect]]\nname = \"p\"\ncmdline = '([a-z'\n",
	} {
		_, err := Parse("p.toml", []byte(src), testClients)
		var es Errors
		if !errors.As(err, &es) || len(es) != 1 || !strings.Contains(es[0].Error(), "bad regex") {
			t.Errorf("%q: %v; want one error, the bad regex", src, err)
		}
	}
}

func TestUnknownUserWarns(t *testing.T) {
	src := "version = 1\n[[rule]]\nname = \"a\"\nwhen = [\"reparented\"]\nuser = [\"no-such-user-xyz\", \"1234\"]\n"
	p, err := Parse("p.toml", []byte(src), testClients)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.HasPrefix(p.Warnings[0], `p.toml:5: user "no-such-user-xyz": no such user on this host`) || !strings.HasSuffix(p.Warnings[0], "; it matches nothing") {
		t.Errorf("warnings %q", p.Warnings)
	}
	if uids := p.Rules[0].UIDs; len(uids) != 1 || uids[0] != 1234 {
		t.Errorf("uids %v, want [1234]", uids)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"4096", 4096, true}, {"50MiB", 50 << 20, true}, {"1GiB", 1 << 30, true}, {"512KB", 512000, true},
		{"2M", 2000000, true}, {"3Ki", 3072, true}, {"7B", 7, true}, {" 1 TiB ", 1 << 40, true},
		{"", 0, false}, {"MiB", 0, false}, {"1.5GiB", 0, false}, {"-1", 0, false}, {"99999999999TiB", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(specExample))
	f.Add([]byte(defaultPolicy))
	f.Add([]byte("version = 1\n[[rule]]\nname = 'x'\nwhen = ['reparented']\nmin_rss = 5\n"))
	f.Add([]byte("version = 1\n[defaults]\ngrace = '1s'\n[[protect]]\nname='p'\nuser=['0']\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse("fuzz.toml", b, testClients)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *policy.Error", err)
			}
			return
		}
		for _, r := range p.Rules {
			if len(r.When) == 0 || r.Name == "" {
				t.Fatalf("accepted rule %+v", r)
			}
		}
	})
}

// More owners than a scan can tell apart are refused with the line of the
// first one too many; the control, exactly the maximum, loads.
func TestTooManyOwners(t *testing.T) {
	doc := func(n int) []byte {
		var b strings.Builder
		b.WriteString("version = 1\n")
		for k := 0; k < n; k++ {
			fmt.Fprintf(&b, "[[owner]]\nname = \"o%d\"\ncmdline = 'o%d'\n", k, k)
		}
		return []byte(b.String())
	}
	if _, err := Parse("owners.toml", doc(scan.MaxOwners), testClients); err != nil {
		t.Fatalf("control: %d owners: %v", scan.MaxOwners, err)
	}
	_, err := Parse("owners.toml", doc(scan.MaxOwners+1), testClients)
	want := fmt.Sprintf("owners.toml:%d: more than %d [[owner]] entries", 2+3*scan.MaxOwners, scan.MaxOwners)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%d owners: %v, want %q", scan.MaxOwners+1, err, want)
	}
}

// A rule that signals every reparented or untracked tree on its shape
// alone is valid, with a warning naming its line; anything that confines
// it — a kind, a cmdline, @evidence — or a report action (the controls)
// takes the warning away.
func TestBroadRuleWarns(t *testing.T) {
	head := "version = 1\n[[rule]]\nname = \"all\"\nwhen = [\"reparented\", \"untracked\"]\n"
	for _, tc := range []struct {
		extra string
		warn  bool
	}{
		{`action = "terminate"`, true},
		{"action = \"kill\"\nuser = [\"1234\"]", true},
		{"action = \"terminate\"\nkind = [\"mcp\"]", false},
		{"action = \"terminate\"\ncmdline = 'mcp-server'", false},
		{"action = \"terminate\"\nuser = [\"@evidence\"]", false},
		{`action = "report"`, false},
	} {
		p, err := Parse("p.toml", []byte(head+tc.extra+"\n"), testClients)
		if err != nil {
			t.Fatalf("%q: %v", tc.extra, err)
		}
		warned := len(p.Warnings) == 1 && strings.HasPrefix(p.Warnings[0], `p.toml:2: rule "all" `) && strings.Contains(p.Warnings[0], "tmux")
		if warned != tc.warn || len(p.Warnings) > 1 {
			t.Errorf("%q: warnings %q, want a warning %v", tc.extra, p.Warnings, tc.warn)
		}
	}
}

// The storm keys: a rate and a time a person can read back, and the
// errors that name the key (the control: the defaults when unset).
func TestStormKeys(t *testing.T) {
	p, err := Parse("s.toml", []byte("version = 1\n[defaults]\nstorm_rate = 100\nstorm_for = \"5s\"\n"), testClients)
	if err != nil || p.Defaults.StormRate != 100 || p.Defaults.StormFor != 5*time.Second {
		t.Errorf("storm_rate 100, storm_for 5s: %+v %v", p.Defaults, err)
	}
	for _, bad := range []string{"storm_rate = -1", "storm_rate = \"fast\"", "storm_for = \"500ms\"", "storm_for = \"2h\""} {
		_, err := Parse("s.toml", []byte("version = 1\n[defaults]\n"+bad+"\n"), testClients)
		key, _, _ := strings.Cut(bad, " ")
		if err == nil || !strings.Contains(err.Error(), "s.toml:3") || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want an error at s.toml:3 naming %s", bad, err, key)
		}
	}
}

// A user named in a policy is the uid reaper counts that user's processes
// by: on Unix the account's uid, on Windows its SID's relative id — this
// reaper's own account is platform.EUID either way.
func TestLookupOwnUser(t *testing.T) {
	u, err := user.Current()
	if err != nil {
		t.Skipf("no current account to look up: %v", err)
	}
	uid, err := lookupUID(u.Username)
	if err != nil || uid != platform.EUID() {
		t.Errorf("lookupUID(%q) = %d, %v; want %d (platform.EUID)", u.Username, uid, err, platform.EUID())
	}
}
