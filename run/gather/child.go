package gather

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/platform/child"
)

// ChildCommand is the hidden first argument that makes reaper's binary a
// reader child (ChildMain). It is not a command of the CLI.
const ChildCommand = "__read-state"

// protocol is the version of what a reader child prints. Parent and child
// are the same binary on Linux (/proc/self/exe); elsewhere an upgrade can
// put a newer binary in between, and a mismatch is that user's doubt.
const protocol = 2

// What a reader child prints is lines: a header, then two lines for each
// dir it was given, in order — what was asked (childState) and what the
// client's Read returned, as JSON:
//
//	{"protocol":2,"states":N}
//	{"client":"openclaw","dir":"/home/a/.openclaw"}
//	{...openclaw's read...}
//
// encoding/json writes a value with no newline in it (one inside a string
// is escaped), so a line is one value. The parent hands each read to its
// client's Decode as it is: every byte is decoded once, where one JSON
// document with the reads as RawMessages was validated and scanned twice
// more by each side (measured: 20 users' reads, ~0.7 MiB, cost the
// parent ~4 ms of CPU that way).
type childHeader struct {
	Protocol int `json:"protocol"`
	States   int `json:"states"`
}

// childState is what one dir's read was asked for: the client and dir
// (and as a child's argument, the records to read of a dir read by
// change).
type childState struct {
	Client  string   `json:"client"`
	Dir     string   `json:"dir"`
	Changed []string `json:"changed,omitempty"`
}

// childArg is how a dir is named to a reader child: CLIENT:DIR (a client's
// name holds no ':'), or for a dir read by change a JSON childState with
// the records' names (it starts with '{', which no client's name does).
func childArg(d Dir) string {
	if d.byChange {
		b, _ := json.Marshal(childState{Client: d.Client, Dir: d.Path, Changed: d.names()})
		return string(b)
	}
	return d.Client + ":" + d.Path
}

// parseChildArg is childArg's client, dir and, for a read by change, the
// records' names (nil: read whole).
func parseChildArg(arg string) (name, dir string, changed []string, err error) {
	if !strings.HasPrefix(arg, "{") {
		name, dir, _ = strings.Cut(arg, ":")
		return name, dir, nil, nil
	}
	var s childState
	if err := json.Unmarshal([]byte(arg), &s); err != nil {
		return "", "", nil, fmt.Errorf("a dir read by change: %w", err)
	}
	if s.Changed == nil {
		s.Changed = []string{}
	}
	return s.Client, s.Dir, s.Changed, nil
}

// The bounds of one reader child. Measured on this project's test machine:
// the binary needs about 80 MiB of RLIMIT_DATA to start (Go's heap arena
// map); a user's store that makes its reader hold more than the limit
// fails inside its child rather than growing the parent.
// A child reads every state dir of one user, all within its deadline.
var (
	childLimits = child.Limits{Data: 384 << 20, CPU: 10, Files: 64, Memory: 256 << 20}
	// ChildDeadline bounds one child's wall time (a variable for tests).
	ChildDeadline = 5 * time.Second
)

const (
	// maxChildOut bounds what the parent reads of a child's output: a
	// state dir's evidence is a few MiB at most (bounded rows and fields).
	maxChildOut = 32 << 20
	maxChildErr = 4 << 10
	// maxChildren is how many children read at once.
	maxChildren = 4
)

// ChildMain is the reader child: it sets its limits before anything else,
// then reads each state dir named after "--" (as CLIENT:DIR) with the Read
// of its client and prints what they returned as one JSON document. The
// clients are cs and those "--client SPEC" arguments before "--" declare
// (client.Declared), which declare makes again. It returns the exit
// status.
func ChildMain(args []string, stdout, stderr io.Writer, cs client.Set, declare func(spec []byte) (client.Client, error)) int {
	if err := child.LimitSelf(childLimits); err != nil {
		fmt.Fprintln(stderr, "reader:", err)
		return 70 // EX_SOFTWARE: it must not read unbounded
	}
	list := slices.Clone(cs.All()) // the declared ones are added to a copy
	for len(args) >= 2 && args[0] == "--client" {
		if declare == nil {
			fmt.Fprintln(stderr, "reader: this binary reads no declared client")
			return 64
		}
		c, err := declare([]byte(args[1]))
		if err != nil {
			fmt.Fprintln(stderr, "reader:", err)
			return 64
		}
		list, args = append(list, c), args[2:]
	}
	cs = client.NewSet(list...)
	if len(args) == 0 || args[0] != "--" {
		fmt.Fprintln(stderr, "reader: want [--client SPEC]... -- CLIENT:DIR...")
		return 64
	}
	// An Encoder writes each value with its newline straight from its
	// pooled buffer: no copy of a read is made to print it.
	enc := json.NewEncoder(stdout)
	fail := func(code int, err error) int {
		fmt.Fprintln(stderr, "reader:", err)
		return code
	}
	if err := enc.Encode(childHeader{Protocol: protocol, States: len(args) - 1}); err != nil {
		return fail(74, err)
	}
	for _, arg := range args[1:] {
		name, dir, changed, err := parseChildArg(arg)
		if err != nil {
			return fail(64, err)
		}
		c := cs.ByName(name)
		if c == nil {
			return fail(64, fmt.Errorf("no client %q", name))
		}
		if err := enc.Encode(childState{Client: name, Dir: dir}); err != nil {
			return fail(74, err)
		}
		read := c.Read
		if changed != nil {
			read = func(dir string) []byte { return c.ReadChanged(dir, changed) }
		}
		// One line: encoding/json writes no newline inside a value.
		if _, err := stdout.Write(append(read(dir), '\n')); err != nil {
			return fail(74, err)
		}
	}
	return 0
}
