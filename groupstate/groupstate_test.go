package groupstate

import "testing"

func TestTallyNamesEachState(t *testing.T) {
	type member struct {
		ps     string
		leader bool
	}
	for _, c := range []struct {
		members []member
		want    State
		live    int
	}{
		{nil, Settled, 0},
		{[]member{{"Z", true}, {"X", false}, {"", false}}, Settled, 0},
		{[]member{{"S", true}, {"R", false}}, Running, 2},
		{[]member{{"Z", true}, {"S", false}}, LeaderExited, 1},
		{[]member{{"T", true}, {"t", false}, {"Z", false}}, Stopped, 2},
		{[]member{{"Z", true}, {"T", false}}, Stopped, 1},
		{[]member{{"T", true}, {"S", false}}, Running, 2},
		{[]member{{"D", true}, {"I", false}}, Running, 2},
	} {
		var tl Tally
		for _, m := range c.members {
			tl.Add(m.ps, m.leader)
		}
		if got := tl.State(); got != c.want || tl.Live() != c.live {
			t.Errorf("%v: state %s, live %d; want %s, %d", c.members, got, tl.Live(), c.want, c.live)
		}
	}
}

func TestRankPutsLiveStatesFirst(t *testing.T) {
	for i := 1; i < len(All); i++ {
		if All[i-1].Rank() >= All[i].Rank() {
			t.Fatalf("rank of %s is not below %s", All[i-1], All[i])
		}
	}
	if State("bogus").Rank() != len(All) || !LeaderExited.Live() || Settled.Live() || Unpublished.Live() {
		t.Fatal("rank or liveness of the edge states is wrong")
	}
}
