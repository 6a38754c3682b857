package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orphanreaper/reaper/internal/schematest"
	"github.com/orphanreaper/reaper/internal/skips"
	"github.com/orphanreaper/reaper/platform"
	"github.com/orphanreaper/reaper/policy"
	"github.com/orphanreaper/reaper/scan"
)

// The report's JSON keeps to the schema the packages ship: every golden
// report (the binary's output on the fixture machine, in every mode the
// goldens hold) and a report of this machine's live table. The schema
// admits no field it does not name, so a field added to the report and
// not to the schema fails here. The control: a report with a field the
// schema does not name, and one with an outcome it does not know, fail.
func TestReportSchema(t *testing.T) {
	schema, err := os.ReadFile("report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	valid := func(name string, doc []byte) []string {
		t.Helper()
		errs, err := schematest.Validate(schema, doc)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return errs
	}
	goldens, _ := filepath.Glob("../testdata/golden/scan-*.json")
	if len(goldens) == 0 {
		t.Fatal("no golden reports")
	}
	for _, path := range goldens {
		doc, _ := os.ReadFile(path)
		// The goldens hold "uid": UID where a fixture's uid is whoever
		// checked the repository out (cmd/reaper's normalize).
		doc = []byte(strings.ReplaceAll(string(doc), `"uid": UID`, `"uid": 1000`))
		if errs := valid(path, doc); len(errs) > 0 {
			t.Errorf("%s:\n%s", path, strings.Join(errs, "\n"))
		}
	}

	s, err := platform.ReadSnapshot(platform.DefaultProcRoot)
	if err != nil {
		skips.Skipf(t, "no live table here: %v", err)
	}
	defer s.Close()
	pol := policy.Default(policy.Clients{}) // the report's shape, whatever the clients
	res, err := scan.Scan(s, pol.ScanConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := pol.MatchAll(res, policy.PlanOptions{Mode: policy.ModeScan, UID: platform.EUID()})
	res.ResolveInUse(m.Roots())
	plan := pol.Decide(res, m)
	rep := NewReport(Read(Reading{Policy: pol, Result: res, Plan: plan, Unmatched: true}), pol, s, nil)
	live, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if errs := valid("live", live); len(errs) > 0 {
		t.Errorf("this machine's report:\n%s", strings.Join(errs, "\n"))
	}

	var doc map[string]any
	json.Unmarshal(live, &doc)
	doc["surprise"] = 1
	extra, _ := json.Marshal(doc)
	if errs := valid("control", extra); len(errs) != 1 || !strings.Contains(errs[0], "$.surprise: not in the schema") {
		t.Errorf("control, an unnamed field: %v", errs)
	}
	golden, _ := os.ReadFile("../testdata/golden/scan-fixture.json")
	bad := strings.ReplaceAll(string(golden), `"uid": UID`, `"uid": 1000`)
	bad = strings.Replace(bad, `"outcome": "reported"`, `"outcome": "vanished"`, 1)
	if errs := valid("control", []byte(bad)); len(errs) != 1 || !strings.Contains(errs[0], "vanished is not one of") {
		t.Errorf("control, an unknown outcome: %v", errs)
	}
}
