// Package all is the list of every agent client reaper knows: an adapter
// is one package under client/ and one line in all.go. Only cmd imports
// it; every package below receives the list as a client.Set. Its tests
// hold what only the shipped clients together decide: every client's
// marks merged, and the shipped example policy and man page valid for
// them.
package all
