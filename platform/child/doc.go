// Package child runs and bounds the reader child, a re-execution of
// reaper's own binary as another user: the drop to that user before exec,
// the limits the child sets on itself before it reads a byte (data, CPU,
// files, no core, not dumpable), its death with its parent, its
// environment, and the parent's reading of its output within a deadline
// and caps. What the child reads, and how its output is judged, is
// run/gather's.
package child
