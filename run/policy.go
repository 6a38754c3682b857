package run

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/client/declared"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/policy"
)

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
	return Config{Policy: pol, Clients: ClientsOf(base, pol), Discover: true, Timeout: scanTimeout}
}

// ClientsOf are the clients a run with pol knows (NewConfig).
func ClientsOf(base client.Set, pol *policy.Policy) client.Set {
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
	if path := paths.Current().Policy; path != "" {
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
