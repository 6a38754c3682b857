package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/orphanreaper/reaper/platform/signals"
)

// confirm asks question and reads the answer from in: true for "y" or
// "yes". The read waits in a goroutine of its own, so that Ctrl-C
// (SIGINT) or SIGTERM while it waits — which cancel ctx (signalContext) —
// is a "no" at once, returned with the exit status the signal calls for
// (128+N); Ctrl-D, or no answer, is a plain "no". A read the process
// leaves waiting ends with it.
func confirm(ctx context.Context, in io.Reader, out io.Writer, question string) (bool, error) {
	fmt.Fprint(out, question)
	answer := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(in).ReadString('\n')
		answer <- s
	}()
	select {
	case s := <-answer:
		a := strings.ToLower(strings.TrimSpace(s))
		return a == "y" || a == "yes", nil
	case <-ctx.Done():
		fmt.Fprintln(out)
		return false, interrupted(ctx)
	}
}

// interrupted is the exit status for a command a signal stopped: 128+N
// for the signal (130 for SIGINT, 143 for SIGTERM), 130 when the cause is
// not known.
func interrupted(ctx context.Context) error {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		return exitStatus(signals.ExitStatus(s.sig))
	}
	return exitStatus(signals.ExitStatus(signals.Interrupt))
}
