// Package pi is pi's adapter (@mariozechner/pi-coding-agent), a coding
// agent with no MCP whose bash tool spawns `/bin/bash -c COMMAND` detached
// (a session of its own, stdin /dev/null, stdout and stderr sockets to
// pi) and ends those shells only on its own exit paths: SIGKILLed, it
// leaves them running, reparented.
//
// pi records no pid anywhere: its session files
// (~/.pi/agent/sessions/--CWD--/TIME_UUID.jsonl) hold the conversation,
// not the process. What marks its tool's trees is its environment: pi
// sets PI_CODING_AGENT=true on itself at start (so a child carries it,
// pi's own /proc/PID/environ does not) and puts ~/.pi/agent/bin first on
// the child's PATH. pi titles itself "pi" (process.title: its command
// line is the one word). The proof its end is the table's: a marked root
// whose user runs no pi that started before it was spawned by a pi that
// is gone (scan.SpawnerMark). PI_CODING_AGENT_DIR moves ~/.pi/agent.
package pi
