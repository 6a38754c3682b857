package packaging

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The npm launcher runs the binary of the platform Node says it is on,
// from the package npm installed beside it — bin/reaper.exe on Windows —
// with the arguments and exit status passed through; a platform reaper
// is not built for says so, and one built for whose package is missing
// says how to install it (the controls: each picks its own package, not
// the other installed one). Node's process.platform and arch are set by
// a preload, so every platform is asked on this one; the "binaries" are
// scripts that say which they are.
func TestLauncherPicksItsPlatform(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node here: the launcher is checked where npm's packages are made (scripts/check-packaging.sh)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in binaries are shell scripts")
	}
	mods := filepath.Join(t.TempDir(), "node_modules", "@orphanreaper")
	launcher, err := os.ReadFile(filepath.Join("npm", "launcher.js"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(path, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mods, "reaper", "bin", "reaper.js"), string(launcher), 0o755)
	write(filepath.Join(mods, "reaper", "package.json"), `{"name": "@orphanreaper/reaper", "version": "9.9.9"}`, 0o644)
	for plat, exe := range map[string]string{"linux-x64": "reaper", "win32-arm64": "reaper.exe"} {
		dir := filepath.Join(mods, "reaper-"+plat)
		write(filepath.Join(dir, "package.json"), `{"name": "@orphanreaper/reaper-`+plat+`", "version": "9.9.9"}`, 0o644)
		write(filepath.Join(dir, "bin", exe), "#!/bin/sh\necho "+plat+" \"$@\"\nexit 7\n", 0o755)
	}
	preload := filepath.Join(t.TempDir(), "as.js")
	write(preload, `const [p, a] = process.env.AS.split('-');
Object.defineProperty(process, 'platform', { value: p });
Object.defineProperty(process, 'arch', { value: a });
`, 0o644)
	run := func(as string) (stdout, stderr string, code int) {
		t.Helper()
		cmd := exec.Command(node, "-r", preload, filepath.Join(mods, "reaper", "bin", "reaper.js"), "scan", "--quiet")
		cmd.Env = append(os.Environ(), "AS="+as)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	for _, as := range []string{"win32-arm64", "linux-x64"} {
		out, errs, code := run(as)
		if out != as+" scan --quiet\n" || code != 7 {
			t.Errorf("as %s: ran %q (stderr %q), exit %d; want its own package's binary, the arguments, exit 7", as, out, errs, code)
		}
	}
	out, errs, code := run("win32-x64")
	if code != 1 || out != "" || !strings.Contains(errs, "npm install -g @orphanreaper/reaper-win32-x64@9.9.9 @orphanreaper/reaper@9.9.9") {
		t.Errorf("as win32-x64, its package missing: exit %d, stdout %q, stderr %q; want exit 1 and how to install both", code, out, errs)
	}
	out, errs, code = run("win32-ia32")
	if code != 1 || out != "" || !strings.Contains(errs, "not win32-ia32: build it from source") {
		t.Errorf("as win32-ia32: exit %d, stdout %q, stderr %q; want exit 1: not built for it", code, out, errs)
	}
}
