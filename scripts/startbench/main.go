//go:build linux

// Command startbench times short commands side by side: each round runs
// every command once, in a new random order, and reads its wall time and
// its minor page faults and peak RSS (wait4's rusage: the command and the
// children it waited for). It prints each command's medians and the
// median of its per-round ratios to the first command's, the baseline, so
// that the machine's drift over the run falls out of the ratios.
//
// usage: startbench [-n ROUNDS] -- 'CMD ARG…' 'CMD ARG…' …
//
// Each command is split on spaces (no shell, no PATH search: its first
// word is a path); its output is thrown away.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

type sample struct {
	wall   time.Duration
	faults int64
	rssKiB int64
}

func main() {
	rounds := flag.Int("n", 30, "rounds: each runs every command once")
	flag.Parse()
	cmds := flag.Args()
	if len(cmds) < 1 {
		fmt.Fprintln(os.Stderr, "usage: startbench [-n ROUNDS] -- 'CMD ARG...' ...")
		os.Exit(2)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "startbench:", err)
		os.Exit(1)
	}
	samples := make([][]sample, len(cmds))
	order := make([]int, len(cmds))
	for i := range order {
		order[i] = i
	}
	for r := -1; r < *rounds; r++ { // round -1 warms the page cache, uncounted
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			s, err := runOnce(cmds[k], devnull)
			if err != nil {
				fmt.Fprintf(os.Stderr, "startbench: %s: %v\n", cmds[k], err)
				os.Exit(1)
			}
			if r >= 0 {
				samples[k] = append(samples[k], s)
			}
		}
	}
	fmt.Printf("%d rounds; ratios are the medians of each round's ratio to the first command's\n", *rounds)
	fmt.Printf("%-60s %9s %7s %8s %9s %9s\n", "command", "wall ms", "× wall", "faults", "× faults", "RSS MiB")
	for k, c := range cmds {
		wall := median(samples[k], func(s sample) float64 { return float64(s.wall.Microseconds()) / 1000 })
		faults := median(samples[k], func(s sample) float64 { return float64(s.faults) })
		rss := median(samples[k], func(s sample) float64 { return float64(s.rssKiB) / 1024 })
		var rw, rf []float64
		for i := range samples[k] {
			rw = append(rw, float64(samples[k][i].wall)/float64(samples[0][i].wall))
			rf = append(rf, float64(samples[k][i].faults)/float64(samples[0][i].faults))
		}
		fmt.Printf("%-60.60s %9.2f %7.2f %8.0f %9.2f %9.1f\n", c, wall, medianOf(rw), faults, medianOf(rf), rss)
	}
}

// runOnce runs cmd once and reads what it cost.
func runOnce(cmd string, devnull *os.File) (sample, error) {
	args := strings.Fields(cmd)
	start := time.Now()
	p, err := os.StartProcess(args[0], args, &os.ProcAttr{Files: []*os.File{nil, devnull, devnull}})
	if err != nil {
		return sample{}, err
	}
	st, err := p.Wait()
	wall := time.Since(start)
	if err != nil {
		return sample{}, err
	}
	if !st.Success() {
		return sample{}, fmt.Errorf("%s", st)
	}
	ru := st.SysUsage().(*syscall.Rusage)
	return sample{wall: wall, faults: ru.Minflt, rssKiB: ru.Maxrss}, nil
}

func median(s []sample, f func(sample) float64) float64 {
	v := make([]float64, len(s))
	for i := range s {
		v[i] = f(s[i])
	}
	return medianOf(v)
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
