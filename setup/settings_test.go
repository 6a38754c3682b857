package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/client"
)

// entryOf is a hook entry as Hook makes it, for a binary at exe.
func entryOf(exe string) func(string) string {
	h := &Hook{}
	h.Client.Hook = claudeHook
	return h.entry(exe)
}

// claudeHook is Claude Code's, as its adapter says.
var claudeHook = &client.Hook{DirEnv: "CLAUDE_CONFIG_DIR", Dir: "~/.claude", File: "settings.json", Event: "SessionStart", Matcher: "startup|resume", Timeout: 5}

// shapes are settings files as users have them.
var shapes = []struct{ name, before string }{
	{"empty object", "{}\n"},
	{"empty object, spaced", "{ \n }"},
	{"other settings", "{\n  \"model\": \"opus\",\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}\n}\n"},
	{"other hooks", "{\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  },\n  \"theme\": \"dark\"\n}\n"},
	{"empty hooks", "{\"hooks\": { }, \"x\": 1}"},
	{"another SessionStart", "{\"hooks\": {\"SessionStart\": [{\"matcher\": \"resume\", \"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]}}"},
	{"SessionStart on its lines", "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}\n    ]\n  }\n}\n"},
	{"empty SessionStart", "{\"hooks\": {\"SessionStart\": [ ]}}"},
	{"the mark's text elsewhere", "{\"note\": \"# reaper hook\"}"},
	{"tabs", "{\n\t\"model\": \"opus\"\n}\n"},
	{"tabs, empty hooks", "{\n\t\"hooks\": {}\n}\n"},
	{"four spaces, empty hooks", "{\n    \"theme\": \"dark\",\n    \"hooks\": {}\n}\n"},
	{"compact", "{\"model\":\"opus\"}"},
}

// The lines add puts in are in the file's own indentation: its members'
// where it has some, its unit (tabs, four spaces) in an empty object.
func TestSettingsIndentation(t *testing.T) {
	for _, tt := range []struct{ name, before, opens, closes string }{
		{"tabs", "{\n\t\"model\": \"opus\"\n}\n", "{\n\t\"hooks\": ", ",\n\t\"model\""},
		{"tabs, empty hooks", "{\n\t\"hooks\": {}\n}\n", "{\n\t\"hooks\": {\n\t\t\"SessionStart\": [", "]\n\t}\n}\n"},
		{"four spaces, empty hooks", "{\n    \"theme\": \"dark\",\n    \"hooks\": {}\n}\n", "\n    \"hooks\": {\n        \"SessionStart\": [", "]\n    }\n}\n"},
		{"compact", "{\"model\":\"opus\"}", "{\"hooks\": ", "]},\"model\""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			after, err := AddHook([]byte(tt.before), "SessionStart", entryOf("/usr/bin/reaper"), false)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(after), tt.opens) || !strings.Contains(string(after), tt.closes) {
				t.Errorf("after add:\n%s\nwant it to hold %q and %q", after, tt.opens, tt.closes)
			}
		})
	}
}

// installed reports whether the settings' SessionStart holds reaper's
// entry, as the client reads them.
func installed(t *testing.T, data []byte) bool {
	t.Helper()
	// Keys as the client (JavaScript) reads them: exactly, not as
	// encoding/json's struct fields do, whatever their case.
	var top, hooks map[string]json.RawMessage
	var entries []json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	json.Unmarshal(top["hooks"], &hooks)
	json.Unmarshal(hooks["SessionStart"], &entries)
	for _, e := range entries {
		if _, _, ok := ours(e); ok {
			return true
		}
	}
	return false
}

// A binary that moved (an upgrade, a new npx cache): add replaces
// reaper's entry with one for the new path, and only that.
func TestSettingsMovedBinary(t *testing.T) {
	before := "{\n  \"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]}\n}\n"
	old, err := AddHook([]byte(before), "SessionStart", entryOf("/old/reaper"), false)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := AddHook(old, "SessionStart", entryOf("/new/reaper"), false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(moved), "/old/reaper") || !strings.Contains(string(moved), "/new/reaper") {
		t.Errorf("after a move:\n%s", moved)
	}
	if back, _ := RemoveHook(moved, "SessionStart", false); string(back) != before {
		t.Errorf("remove after a move: %q", back)
	}
}

// What cannot be edited safely is refused with its line and column, and
// the mark's text outside SessionStart is no hook.
func TestSettingsRefused(t *testing.T) {
	for _, tt := range []struct{ name, data, want string }{
		{"malformed", "{\n  \"model\": \"opus\"\n  \"theme\": 1\n}", "3:3: not valid JSON"},
		{"trailing data", "{}\n{}", "2:1: not valid JSON"},
		{"an array", "[1]", "1:1: not a JSON object"},
		{"hooks twice", "{\"hooks\": {}, \n\"hooks\": {\"Stop\": []}}", "2:1: the settings has \"hooks\" twice"},
		{"SessionStart twice", "{\"hooks\": {\"SessionStart\": [], \"SessionStart\": []}}", "1:32: hooks has \"SessionStart\" twice"},
		{"hooks a string", "{\"hooks\": \"x\"}", "1:11: hooks is not an object"},
		{"SessionStart an object", "{\"hooks\": {\"SessionStart\": {}}}", "1:28: hooks.SessionStart is not an array"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := AddHook([]byte(tt.data), "SessionStart", entryOf("/usr/bin/reaper"), false)
			var se *SettingsError
			if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzSettingsEdit holds the editor to its promise on any input: what add
// or remove gives is valid JSON; remove(add(x)) is x for settings without
// reaper's hook; add is idempotent; a refusal changes nothing.
func FuzzSettingsEdit(f *testing.F) {
	for _, s := range shapes {
		f.Add([]byte(s.before))
	}
	f.Add([]byte(`{"hooks":{"SessionStart":[{"hooks":[{"command":"x # reaper hook"}]}]}}`))
	f.Add([]byte(`{"a":[1,2,{"b":null}],"hooks":{"Stop":[],"SessionStart":[1, 2]}}`))
	for _, s := range jsoncShapes {
		f.Add([]byte(s.before))
	}
	entry := entryOf("/usr/bin/reaper")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(bytes.TrimSpace(data)) == 0 {
			return // a new file: no bytes to give back
		}
		// Strict JSON (Claude Code's settings), and JSON with comments
		// (Gemini CLI's), judged by what each client reads.
		for _, jsonc := range []bool{false, true} {
			valid := json.Valid
			if jsonc {
				valid = func(b []byte) bool { return json.Valid(shadow(b)) }
			}
			removed, rerr := RemoveHook(data, "SessionStart", jsonc)
			if rerr == nil && !valid(removed) {
				t.Fatalf("jsonc %v: remove gave what the client cannot read:\n%q\nfrom\n%q", jsonc, removed, data)
			}
			added, err := AddHook(data, "SessionStart", entry, jsonc)
			if err != nil {
				continue
			}
			if !valid(added) {
				t.Fatalf("jsonc %v: add gave what the client cannot read:\n%q\nfrom\n%q", jsonc, added, data)
			}
			if !installed(t, shadow(added)) {
				t.Fatalf("jsonc %v: add put no hook in:\n%q", jsonc, added)
			}
			again, err := AddHook(added, "SessionStart", entry, jsonc)
			if err != nil || !bytes.Equal(again, added) {
				t.Fatalf("jsonc %v: a second add changed %q into %q (%v)", jsonc, added, again, err)
			}
			back, err := RemoveHook(added, "SessionStart", jsonc)
			if err != nil {
				t.Fatalf("jsonc %v: remove of what add made: %v", jsonc, err)
			}
			if bytes.Equal(removed, data) && !bytes.Equal(back, data) {
				t.Fatalf("jsonc %v: remove(add(x)) is not x:\n%q\nwant\n%q", jsonc, back, data)
			}
		}
	})
}

// jsoncShapes are settings files as Gemini CLI's users have them: JSON
// with comments and trailing commas.
var jsoncShapes = []struct{ name, before string }{
	{"a line comment first", "{\n  // my settings\n  \"theme\": \"dark\"\n}\n"},
	{"a block comment first", "{ /* mine */ \"theme\": \"dark\" }"},
	{"comments everywhere", "// head\n{\n  \"a\": 1, // one\n  /* two */ \"b\": [1, 2,],\n}\n// tail\n"},
	{"trailing commas", "{\n  \"mcpServers\": {\"fs\": {\"command\": \"npx\",},},\n}\n"},
	{"comments in hooks", "{\n  \"hooks\": {\n    // none yet\n  },\n  \"x\": \"a // not a comment\",\n}\n"},
	{"comments in the event", "{\"hooks\": {\"SessionStart\": [ /* mine */ {\"hooks\": [{\"command\": \"mine\"}]}, ]}}"},
}

// Issue 52, item 6: Gemini CLI reads its settings as JSON with comments,
// and so does reaper's reader of them, but hook install refused them
// ("not valid JSON"). As JSONC, each shape takes the hook — every comment
// and trailing comma kept where it was — and gives it back byte for byte;
// as strict JSON (Claude Code's), a comment is refused with its place.
func TestSettingsJSONC(t *testing.T) {
	for _, tt := range jsoncShapes {
		t.Run(tt.name, func(t *testing.T) {
			added, err := AddHook([]byte(tt.before), "SessionStart", entryOf("/usr/bin/reaper"), true)
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(shadow(added)) || !installed(t, shadow(added)) {
				t.Fatalf("after add, not the client's JSON with the hook:\n%s", added)
			}
			for _, c := range []string{"// my settings", "/* mine */", "// one", "/* two */", "// head", "// tail", "// none yet", "a // not a comment"} {
				if strings.Count(tt.before, c) != strings.Count(string(added), c) {
					t.Errorf("comment %q not kept as it was:\n%s", c, added)
				}
			}
			back, err := RemoveHook(added, "SessionStart", true)
			if err != nil || string(back) != tt.before {
				t.Errorf("remove(add(x)): %v\n%q\nwant\n%q", err, back, tt.before)
			}
		})
	}
	var se *SettingsError
	if _, err := AddHook([]byte(jsoncShapes[0].before), "SessionStart", entryOf("/usr/bin/reaper"), false); !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("strict JSON with a comment: %v, want refused at line 2", err)
	}
}
