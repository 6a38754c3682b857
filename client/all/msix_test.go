package all

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// An MSIX app's container (testdata/windows/claude-desktop-*.json): what
// its sessions left in it once the app was updated past or exited is
// owner-dead, the app its owner, in the version words; the app's own
// processes, and a running app's whole container, never are; a member
// whose identity could not be read, or an empty container, is advice, not
// a finding; a container no [[msix]] names is not looked into.
func TestWindowsContainers(t *testing.T) {
	updated := "holds claude-desktop's container of version 1.46388.4.0 (job Container_Claude_1.46388.4.0_x64__pzs8sxrjxfjjc-S-1-5-21-1111111111-2222222222-3333333333-1001); the installed version is 1.49585.0.0; while it lives the new version cannot start"
	for _, tt := range []struct {
		file    string
		example []string // under the example policy, as 1001 reaps
		words   map[int]string
		advice  []string
	}{
		{"claude-desktop-updated.json", []string{
			"3100 other msix-container-leftovers [reparented,owner-dead] [3100 3110 3111] planned terminate",
			"3200 other msix-container-leftovers [reparented,owner-dead] [3200 3210 3220] planned terminate",
			"3400 other msix-container-leftovers [reparented,owner-dead] [3400] planned terminate",
		}, map[int]string{3100: "pid 3100 (bash.exe) " + updated, 3400: "pid 3400 (ssh.exe) " + updated}, nil},
		{"claude-desktop-running.json", nil, nil, []string{"msix-container-unread"}},
		{"claude-desktop-exited.json", []string{
			"7100 mcp msix-container-leftovers [reparented,owner-dead] [7100] planned terminate",
		}, map[int]string{7100: "pid 7100 (node.exe) holds claude-desktop's container of version 1.49585.0.0 (job Container_Claude_1.49585.0.0_x64__pzs8sxrjxfjjc-S-1-5-21-1111111111-2222222222-3333333333-1001), and no process of the app runs in it (none carries its package identity): while it lives the app cannot start again"},
			[]string{"msix-container-empty"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			s, err := platform.ReadWindowsTable(filepath.Join("..", "..", "testdata", "windows", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			pol, err := policy.Load("../../packaging/policy.example.toml", clients)
			if err != nil {
				t.Fatal(err)
			}
			res, _ := scan.Scan(s, pol.ScanConfig(), nil)
			m := pol.MatchAll(res, policy.PlanOptions{Mode: policy.ModeDryRun, UID: 1001})
			plan := pol.Decide(res, m)
			var got []string
			for _, it := range plan.Items {
				f := it.Finding
				var rs []string
				for _, r := range f.Reasons {
					rs = append(rs, string(r))
				}
				if it.Rule == nil || it.Rule.Name != "msix-container-leftovers" {
					continue
				}
				got = append(got, fmt.Sprintf("%d %s %s [%s] %v %s %s", f.Root.PID, f.Kind, it.Rule.Name, strings.Join(rs, ","), f.PIDs(), it.Outcome, it.Action))
			}
			if !reflect.DeepEqual(got, tt.example) {
				t.Errorf("under the example policy:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.example, "\n"))
			}
			for _, f := range res.Findings {
				if w, ok := tt.words[f.Root.PID]; ok && !slices.Contains(f.Evidence, w) {
					t.Errorf("pid %d's evidence %q: want %q", f.Root.PID, f.Evidence, w)
				}
				for _, p := range f.PIDs() {
					if f.Owner == "claude-desktop" && slices.Contains([]int{6000, 6010, 6100, 6110, 5000, 5100}, p) {
						t.Errorf("pid %d, the app's own or a running app's session, is in the finding at %d", p, f.Root.PID)
					}
				}
				if f.Owner == "claude-desktop" && (f.Root.PID == 6200 || f.Root.PID == 6300 || f.Root.PID == 5100) {
					t.Errorf("pid %d attributed to claude-desktop: %q", f.Root.PID, f.Evidence)
				}
			}
			var ids []string
			for _, a := range res.Advice {
				ids = append(ids, a.ID)
			}
			if !reflect.DeepEqual(ids, tt.advice) {
				t.Errorf("advice %q, want %q", ids, tt.advice)
			}
		})
	}
}
