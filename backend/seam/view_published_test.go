package seam

import (
	"strconv"
	"testing"
	"time"

	"sandtop/groupstate"
	"sandtop/sandbox"
)

// The table keeps the most recent finished groups only.
func TestPublishedFinishedAreBounded(t *testing.T) {
	p := newPublishedState()
	var infos []PublishedGroup
	code := 1
	for i := range 60 {
		infos = append(infos, PublishedGroup{ID: strconv.Itoa(i), StateDir: "/r/processes/" + strconv.Itoa(i), Pgid: 1000 + i, State: groupstate.Settled, ExitCode: &code})
	}
	p.groups = mergePublished(nil, infos, false, time.Now())
	groups, _ := p.addPublished(nil, map[int]string{}, 50)
	if len(groups) != 50 {
		t.Fatalf("%d finished groups shown, want %d", len(groups), 50)
	}
	for _, g := range groups {
		if g.PGID < 1010 || g.State != groupstate.Settled {
			t.Fatalf("kept %+v; want the %d newest, settled", g, 50)
		}
	}
}

// Published state is scanned every scanEvery (agents' roots every
// agentScanEvery) while the live table stays the same, but a group leaving
// it (or losing its leader) brings both scans forward, so its exit status
// shows within scanGap.
func TestLiveTableChangeBringsTheScanForward(t *testing.T) {
	p := newPublishedState()
	now := time.Now()
	p.lastOwn, p.ownTook, p.nextOwn = now, 10*time.Millisecond, now.Add(scanEvery)
	running := []sandbox.Group{{PGID: 7, Members: []sandbox.Process{{PID: 7, State: "S"}}}}
	p.addPublished(running, map[int]string{}, 0)
	<-p.kick // the first table is a change
	p.nextOwn = now.Add(scanEvery)
	p.addPublished(running, map[int]string{}, 0)
	select {
	case <-p.kick:
		t.Fatal("an unchanged table brought the scan forward")
	default:
	}
	p.lastAgent, p.agentTook, p.nextAgent = now, 10*time.Millisecond, now.Add(agentScanEvery)
	leaderGone := []sandbox.Group{{PGID: 7, Members: []sandbox.Process{{PID: 7, State: "Z"}, {PID: 8, State: "S"}}}}
	p.addPublished(leaderGone, map[int]string{}, 0)
	select {
	case <-p.kick:
	default:
		t.Fatal("the leader's exit did not bring the scan forward")
	}
	if want := now.Add(scanGap); !p.nextOwn.Equal(want) || !p.nextAgent.Equal(want) {
		t.Fatalf("next scans at +%v and +%v (agents), want +%v", p.nextOwn.Sub(now), p.nextAgent.Sub(now), scanGap)
	}
	p.nextOwn = now.Add(scanEvery)
	p.addPublished(nil, map[int]string{}, 0)
	if len(p.kick) != 1 {
		t.Fatal("the group leaving the table did not bring the scan forward")
	}
}

// A group that ps still lists with only zombies is settled: its published
// state shows it finished, with its exit. A group whose members are gone but
// whose escapees run is leader-exited, not settled.
func TestComposeJudgesZombiesAndEscapees(t *testing.T) {
	code := 9
	p := newPublishedState()
	p.groups = mergePublished(nil, []PublishedGroup{{ID: "a", StateDir: "/r/processes/a", Pgid: 40, State: groupstate.Settled, ExitCode: &code}}, false, time.Now())
	table := liveTable{groups: []sandbox.Group{
		{PGID: 40, Members: []sandbox.Process{{PID: 40, State: "Z"}}},
		{PGID: 50, Escapees: []sandbox.Process{{PID: 51, State: "S"}}},
	}}
	snap := compose(table, p, "/r", 0)
	var zombie, escaped *sandbox.Group
	for i := range snap.Groups {
		switch snap.Groups[i].PGID {
		case 40:
			zombie = &snap.Groups[i]
		case 50:
			escaped = &snap.Groups[i]
		}
	}
	if zombie == nil || zombie.State != groupstate.Settled || zombie.Exit == nil || zombie.Exit.Code != 9 || zombie.Origin != sandbox.OriginSandtop {
		t.Errorf("zombie-only group: %+v", zombie)
	}
	if escaped == nil || escaped.State != groupstate.LeaderExited {
		t.Errorf("group with a live escapee: %+v", escaped)
	}
}
