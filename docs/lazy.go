package docs

import "github.com/spf13/cobra"

// Lazy holds each command's long help, made only when it is shown
// (--help, reaper help CMD, the man pages). Made at every start for
// every command, the help texts were ~350 KiB of every reaper process's
// anonymous memory, and a container's init holds its command tree for
// its life (scripts/bench-init.sh, 2026-11-29: 4,008–4,028 → 3,544–3,732
// KiB after 10 s). The zero Lazy is ready.
type Lazy struct {
	long map[*cobra.Command]func() string
}

// Set gives cmd the long help long makes, when it is shown (Fill).
func (l *Lazy) Set(cmd *cobra.Command, long func() string) *cobra.Command {
	if l.long == nil {
		l.long = map[*cobra.Command]func() string{}
	}
	l.long[cmd] = long
	return cmd
}

// Fill makes c's long help, if Set gave it one not made yet.
func (l *Lazy) Fill(c *cobra.Command) {
	if long := l.long[c]; long != nil && c.Long == "" {
		c.Long = long()
	}
}

// FillTree makes the long help of every command under root.
func (l *Lazy) FillTree(root *cobra.Command) {
	l.Fill(root)
	for _, c := range root.Commands() {
		l.FillTree(c)
	}
}

// Has says whether Set gave c a long help.
func (l *Lazy) Has(c *cobra.Command) bool { return l.long[c] != nil }
