package scan

import (
	"testing"
)

func TestZombieGroups(t *testing.T) {
	gateway := p(200, 10, "node", []string{"node", "/opt/openclaw/dist/entry.js", "gateway"}, nil, "/")
	r := scanTable(snapshot(
		gateway,
		zombie(201, 200), zombie(202, 200), zombie(203, 200),
		p(300, 1, "sleep", []string{"sleep"}, nil, "/"),
		zombie(301, 300),
		zombie(400, 1),
		zombie(500, 450), // parent not visible
	), testConfig)
	gs := r.ZombieGroups()
	if len(gs) != 4 {
		t.Fatalf("%d groups, want 4: %+v", len(gs), gs)
	}
	g := gs[0]
	if g.ParentPID != 200 || len(g.Zombies) != 3 || !g.ParentIsOwner || g.Init || g.Parent == nil {
		t.Errorf("the gateway's group: %+v", g)
	}
	var init *ZombieGroup
	for i := range gs {
		if gs[i].ParentPID == 1 {
			init = &gs[i]
		}
	}
	if init == nil || !init.Init || len(init.Zombies) != 1 {
		t.Errorf("the init group: %+v", init)
	}
	for _, g := range gs {
		if g.ParentPID == 450 && g.Parent != nil {
			t.Errorf("an invisible parent: %+v", g)
		}
	}
}
