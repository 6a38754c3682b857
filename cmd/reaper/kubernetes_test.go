package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestKubernetesExample: every reaper command line of the shipped
// Kubernetes example parses as the CLI parses it — a command reaper has,
// flags it takes — with --metrics-listen a host:port; each pod's scrape
// annotations name the port its reaper listens on, and its liveness
// probe asks /healthz. The control: an unknown flag in the same lines
// fails the same parse.
func TestKubernetesExample(t *testing.T) {
	b, err := os.ReadFile("../../packaging/kubernetes/reaper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type container struct {
		Name          string
		Command, Args []string
		LivenessProbe struct {
			HTTPGet struct{ Path string } `yaml:"httpGet"`
		} `yaml:"livenessProbe"`
	}
	type pod struct {
		Kind     string
		Metadata struct {
			Name        string
			Annotations map[string]string
		}
		Spec struct {
			ShareProcessNamespace bool `yaml:"shareProcessNamespace"`
			Containers            []container
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	reapers := 0
	for {
		var p pod
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Spec.Containers {
			if len(c.Command) == 0 || path.Base(c.Command[0]) != "reaper" {
				continue
			}
			reapers++
			args := append(append([]string{}, c.Command[1:]...), c.Args...)
			listen := parseLikeTheCLI(t, args)
			_, port, err := net.SplitHostPort(listen)
			if err != nil {
				t.Errorf("%s/%s: --metrics-listen %q: %v", p.Metadata.Name, c.Name, listen, err)
			}
			if a := p.Metadata.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/port"] != port || a["prometheus.io/path"] != "/metrics" {
				t.Errorf("%s: scrape annotations %v, want port %s and /metrics", p.Metadata.Name, a, port)
			}
			if c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("%s/%s: liveness probe %q, want /healthz", p.Metadata.Name, c.Name, c.LivenessProbe.HTTPGet.Path)
			}
			if args[0] == "watch" && !p.Spec.ShareProcessNamespace {
				t.Errorf("%s: a sidecar watch without shareProcessNamespace sees only its own container", p.Metadata.Name)
			}
			if _, _, err := parseArgs(append(args[:1:1], append([]string{"--no-such-flag"}, args[1:]...)...)); err == nil {
				t.Errorf("control: an unknown flag in %q parsed", args)
			}
		}
	}
	if reapers != 2 {
		t.Errorf("%d reaper containers, want the init's and the sidecar's", reapers)
	}
}

// parseLikeTheCLI parses args with reaper's own commands and flags, and
// returns the --metrics-listen value.
func parseLikeTheCLI(t *testing.T, args []string) string {
	t.Helper()
	name, listen, err := parseArgs(args)
	if err != nil {
		t.Fatalf("reaper %q: %v", args, err)
	}
	if name != "run" && name != "watch" {
		t.Errorf("reaper %q: command %q, want run or watch", args, name)
	}
	return listen
}

// parseArgs finds the command args name, as the CLI does, and parses its
// flags without running it.
func parseArgs(args []string) (name, listen string, err error) {
	root := newRootCommand(&globalOptions{stdout: io.Discard, stderr: io.Discard})
	cmd, rest, err := root.Find(args)
	if err != nil {
		return "", "", err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return "", "", err
	}
	if cmd.Name() == "run" && cmd.Flags().ArgsLenAtDash() < 0 {
		return "", "", errors.New("run without -- CMD")
	}
	listen, err = cmd.Flags().GetString("metrics-listen")
	return cmd.Name(), listen, err
}
