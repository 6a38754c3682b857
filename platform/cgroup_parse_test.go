package platform

import "testing"

func TestParseCgroup(t *testing.T) {
	const unit = "/user.slice/user-1000.slice/user@1000.service/app.slice/openclaw-gateway.service"
	tests := []struct {
		name     string
		in       string
		want     Cgroup
		wantPath string
	}{
		{"v2", "0::" + unit + "\n", Cgroup{Unified: unit}, unit},
		{"v1 legacy", "12:pids:/x\n5:cpu,cpuacct:/\n1:name=systemd:" + unit + "\n",
			Cgroup{Systemd: unit}, unit},
		{"hybrid, v2 mirrors the unit", "4:memory:" + unit + "\n1:name=systemd:" + unit + "\n0::" + unit + "\n",
			Cgroup{Systemd: unit, Unified: unit}, unit},
		{"hybrid, v2 root (this sandbox's shape)", "9:name=systemd:/\n4:memory:/process_api/0f69\n0::/\n",
			Cgroup{Systemd: "/", Unified: "/"}, "/"},
		{"hybrid, unit only in name=systemd", "1:name=systemd:" + unit + "\n0::/\n",
			Cgroup{Systemd: unit, Unified: "/"}, unit},
		{"deleted cgroup of a zombie", "0::" + unit + " (deleted)\n", Cgroup{Unified: unit}, unit},
		{"name=systemd among several controllers", "1:foo,name=systemd:/a\n", Cgroup{Systemd: "/a"}, "/a"},
		{"garbage lines skipped", "nonsense\n3\n::\n0::relative\n0::/ok\n", Cgroup{Unified: "/ok"}, "/ok"},
		{"empty", "", Cgroup{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseCgroup([]byte(tt.in))
			if got != tt.want {
				t.Errorf("ParseCgroup = %+v, want %+v", got, tt.want)
			}
			if p := got.Path(); p != tt.wantPath {
				t.Errorf("Path = %q, want %q", p, tt.wantPath)
			}
		})
	}
}

func FuzzParseCgroup(f *testing.F) {
	f.Add([]byte("0::/a/b.service\n"))
	f.Add([]byte("1:name=systemd:/x (deleted)\n0::/\n"))
	f.Add([]byte(":::\n0:"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cg := ParseCgroup(b)
		for _, p := range []string{cg.Unified, cg.Systemd} {
			if p != "" && p[0] != '/' {
				t.Fatalf("accepted relative path %q", p)
			}
		}
	})
}
