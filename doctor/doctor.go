package doctor

import (
	"context"
	"os"
	"runtime"
	"time"

	"github.com/orphanreaper/reaper/audit"
	"github.com/orphanreaper/reaper/client"
	"github.com/orphanreaper/reaper/paths"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/run"
	"github.com/orphanreaper/reaper/setup"
)

// Config is what doctor is asked: the flags cmd maps, and what only cmd
// knows (how it resolves a policy, the clients, its version).
type Config struct {
	Version string
	// PolicyFile and LockFile are what the command line names: "" is the
	// one the timer's command line names, else the default.
	PolicyFile, LockFile string
	// Timeout bounds the scan (0: run.NewConfig's bound).
	Timeout time.Duration
	Clients client.Set
	// ReadTable reads the process table (nil: platform.ReadSnapshot).
	ReadTable func(root string) (*platform.Snapshot, error)
}

// Diagnose runs every check, in the order a person reads them: the
// process table, the platform, the policy, the state dirs, what a reap
// would do now, the lock, the schedule, the records and the journal. It
// scans as scan does and sends no signal. The error is an interrupt's.
func Diagnose(ctx context.Context, cfg Config) (*audit.Diagnosis, error) {
	uid := run.EUID()
	d := &audit.Diagnosis{SchemaVersion: audit.SchemaVersion, Version: cfg.Version,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, UID: int64(uid), User: policy.UserName(uid)}

	// The timer's command line says which policy, lock and records are the
	// ones in force: read it first.
	timer, argv := scheduleCheck(ctx)
	policyFile, from := cfg.PolicyFile, "--policy"
	if policyFile == "" {
		if policyFile = flagValue(argv, "policy"); policyFile != "" {
			from = "the timer's --policy"
		}
	}
	lockFile := cfg.LockFile
	if lockFile == "" {
		if lockFile = flagValue(argv, "lock-file"); lockFile == "" {
			lockFile = paths.Current().Lock
		}
	}

	pol, polCheck := policyCheck(cfg, policyFile, from)
	scanPol := pol
	if scanPol == nil {
		scanPol = policy.Default(run.PolicyClients(cfg.Clients))
	}
	started := time.Now()
	rc := run.NewConfig(scanPol, cfg.Clients)
	rc.ReadTable = cfg.ReadTable
	if cfg.Timeout > 0 {
		rc.Timeout = cfg.Timeout
	}
	// A reap would plan as a dry run does: the same pass, its signals not
	// sent.
	pass, err := run.Scan(ctx, rc, policy.ModeDryRun)
	took := time.Since(started)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err // interrupted
		}
		d.Checks = append(d.Checks, audit.Check{Name: "process table", Status: audit.CheckFail,
			Summary: "the scan failed: " + err.Error()})
	} else {
		defer pass.Close()
		d.Checks = append(d.Checks, tableCheck(pass.Table, took), headroomCheck(pass.Table, uid))
	}
	d.Checks = append(d.Checks, platformChecks()...)
	d.Checks = append(d.Checks, polCheck)
	if pass != nil {
		d.Checks = append(d.Checks, stateDirsCheck(pass.Dirs, uid, rc.Clients.Homes()), findingsCheck(pass.Plan, pol == nil))
	}
	home, _ := os.UserHomeDir()
	self, _ := os.Executable()
	if p, err := setup.CheckedPath(self); err == nil {
		self = setup.Stable(p)
	}
	d.Checks = append(d.Checks, lockCheck(lockFile), timer, hookCheck(cfg.Clients, os.Getenv, home, self))
	if uid == 0 && len(argv) > 0 {
		d.Checks = append(d.Checks, serviceBinaryCheck(argv))
	}
	d.Checks = append(d.Checks, recordsCheck(argv, timer, time.Now()), journalCheck())
	return d, nil
}
