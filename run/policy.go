package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/declared"
	"github.com/orphanreaper/reaper/policy"
)

// SystemPolicy is the policy a root reaper reads by default.
const SystemPolicy = "/etc/reaper/policy.toml"

// scanTimeout bounds a pass whose verb names no bound: a scan of
// 20,000 processes takes well under a second.
const scanTimeout = time.Minute

// NewConfig composes a run's configuration under pol once: the clients
// it knows — base, the shipped list cmd hands down, and those pol
// declares with session files (client/declared) — their state discovered,
// each read of the table bounded by a minute (Timeout; a verb's --timeout
// sets another). Every verb that scans starts here, so each is bounded as
// scan is.
func NewConfig(pol *policy.Policy, base client.Set) Config {
	return Config{Policy: pol, Clients: clientsOf(base, pol), Discover: true, Timeout: scanTimeout}
}

// clientsOf are the clients a run with pol knows (NewConfig).
func clientsOf(base client.Set, pol *policy.Policy) client.Set {
	list := declared.Clients(pol)
	if len(list) == 0 {
		return base
	}
	return client.NewSet(append(slices.Clone(base.All()), list...)...)
}

// PolicyClients is what a policy is told of the clients of cs.
func PolicyClients(cs client.Set) policy.Clients {
	return policy.Clients{Owners: cs.Owners(), Marks: cs.Marks(), Names: cs.Names()}
}

// LoadPolicy loads file, else the first default location that exists,
// else the embedded default, told of cs. A default file that exists but
// can't be read is an error, not a reason to fall back.
func LoadPolicy(file string, cs client.Set) (*policy.Policy, error) {
	if file == PolicyFromEnv {
		// An image that cannot mount a file: the policy's text in the
		// environment.
		text, ok := os.LookupEnv(policyEnv)
		if !ok {
			return nil, &policy.Error{File: "$" + policyEnv, Msg: "--policy - reads the policy from $" + policyEnv + ", which is not set"}
		}
		return policy.Parse("$"+policyEnv, []byte(text), PolicyClients(cs))
	}
	if file != "" {
		return policy.Load(file, PolicyClients(cs))
	}
	for _, path := range defaultPolicyPaths() {
		_, err := os.Stat(path)
		if err == nil {
			return policy.Load(path, PolicyClients(cs))
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, &policy.Error{File: path, Msg: err.Error()}
		}
	}
	return policy.Default(PolicyClients(cs)), nil
}

// PolicyFromEnv is the --policy that names the environment's policy:
// the text of policyEnv, for a container image that cannot mount a file.
const (
	PolicyFromEnv = "-"
	policyEnv     = "REAPER_POLICY"
)

// defaultPolicyPaths are where a policy is looked for when none is named:
// /etc/reaper/policy.toml for root, else the user's
// $XDG_CONFIG_HOME/reaper/policy.toml (~/.config when unset).
func defaultPolicyPaths() []string {
	if EUID() == 0 {
		return []string{SystemPolicy}
	}
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil
		}
		dir = filepath.Join(home, ".config")
	}
	return []string{filepath.Join(dir, "reaper", "policy.toml")}
}

// PolicyPath is where a run of this user reads its policy when none is
// named ("" when no home is known): the first of defaultPolicyPaths.
func PolicyPath() string {
	if paths := defaultPolicyPaths(); len(paths) > 0 {
		return paths[0]
	}
	return ""
}

// PolicyPathText is PolicyPath as a person types it: the home as ~.
func PolicyPathText() string {
	path := PolicyPath()
	if home, err := os.UserHomeDir(); err == nil && EUID() != 0 {
		if rest, ok := strings.CutPrefix(path, home+string(filepath.Separator)); ok {
			return filepath.Join("~", rest)
		}
	}
	return path
}
