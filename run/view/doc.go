// Package view is the read-only views of a pass (run.Pass): the sessions
// and their leftovers (PS, with the servers several sessions run a copy
// of and each user's headroom; LiveFigures, what a watch's metrics add),
// one process's story (Explain), the evidence bundle (Bundle), the
// pseudo-terminals (PTYs), and `reaper top`'s source (Top: a view, a
// story, and the reap of one finding through run.Reap's gates). A view
// reads what the pass did not, and never acts.
package view
