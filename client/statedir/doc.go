// Package statedir is what every agent client's adapter reads a state dir
// with: the dir opened once with its owner and identity (a dir renamed or
// replaced while it is read is told), its files read beneath it as its
// owner's (no link followed, regular, owned by the dir's owner, bounded,
// never blocking: platform.ReadBeneath), and what could not be read kept
// as plain data (Report) that crosses the reader child's boundary with its
// cause intact.
package statedir
