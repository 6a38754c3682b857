// Package declared is the client a policy declares ([[client]] with
// session_files): an agent CLI reaper ships no adapter for, whose session
// files name the process that runs each session and the id it puts on
// what it spawns. It is an adapter made from data rather than code: a
// Spec, which crosses to a reader child as one argument (FromSpec makes it
// again there), read as the user like every adapter's state, bounded, and
// speaking for that user's processes only.
//
// A session file ties the trees whose root carries the session's id to
// the session's process: when that process is gone, or another one by its
// start time, they are owner-dead with the file as the proof. A session
// ties by its id and never by its pid alone: a pid a stale file names may
// be another live client's now, whose children carry the same number.
package declared
