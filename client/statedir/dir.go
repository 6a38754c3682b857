package statedir

import (
	"path/filepath"

	"github.com/orphanreaper/reaper/ledger"
	"github.com/orphanreaper/reaper/platform"
)

// Dir reads the files of one client's state dir as its owner's files:
// below the dir, through no symbolic link, owned by the dir's owner,
// regular, within ledger.MaxSize, never blocking (platform.ReadBeneath). The
// state dir of an ordinary user is that user's to fill with anything; a
// root reaper reads it without trusting it.
type Dir struct {
	Path  string
	Owner int
	id    dirID // the directory as it was opened
}

// Open names dir's owner, whose files its files must be.
func Open(dir string) (Dir, error) {
	id, ok := statDir(dir)
	if !ok {
		return Dir{}, &ledger.Error{File: dir, Msg: "not a readable directory"}
	}
	return Dir{Path: dir, Owner: id.UID, id: id}, nil
}

// Unchanged reports whether the path still names the directory that was
// opened: one renamed away or replaced while it was read said things that
// may not be all it holds.
func (d Dir) Unchanged() bool {
	id, ok := statDir(d.Path)
	return ok && id == d.id
}

// Read reads the file rel below the state dir.
func (d Dir) Read(rel string) ([]byte, error) {
	return platform.ReadBeneath(d.Path, rel, ledger.MaxSize, d.Owner)
}

// HomeVars are the variables ProcessHome reads, for a client's EnvNames.
var HomeVars = []string{"HOME", "USERPROFILE"}

// ProcessHome is the home a process's environment names: HOME, else
// USERPROFILE (Windows, where Node's os.homedir reads it); an absolute
// path only.
func ProcessHome(env func(string) (string, bool)) (string, bool) {
	for _, v := range HomeVars {
		if home, ok := env(v); ok && filepath.IsAbs(home) {
			return home, true
		}
	}
	return "", false
}

// HomeDir lists the dir rel below an account's home when it exists and is
// that account's (uid): a client's HomeDirs.
func HomeDir(home, rel string, uid int) []string {
	dir := filepath.Join(filepath.Clean(home), rel)
	if owner, err := platform.DirOwner(dir); err != nil || owner != uid {
		return nil
	}
	return []string{dir}
}
