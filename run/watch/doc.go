// Package watch is the reaper that keeps running: `reaper watch` (Watch:
// a pass at once, then one whenever a hint says one is due — an owner's
// exit, a client's new state, a tree's min_age, an init's adoption — and
// at the backstop, each pass exactly run.Reap), its arming from each
// pass (Owners, NextDue, AnnounceDirs), the fork storms it counts, the
// init it may run inside (Under, Adoptions), its metrics, and `reaper
// run -- CMD` (Wrap), the init that runs a command and reaps what it
// leaves.
package watch
