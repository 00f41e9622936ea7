package stability

import "testing"

func TestPromotionAndDemotion(t *testing.T) {
	var tr Tracker
	var tier Tier
	th := DefaultThresholds
	for i := 0; i <= th.L0; i++ {
		tier = tr.Update(map[string]string{"file:a.go": "h1"})["file:a.go"]
		want := Active
		switch {
		case i >= th.L0:
			want = L0
		case i >= th.L1:
			want = L1
		case i >= th.L2:
			want = L2
		case i >= th.L3:
			want = L3
		}
		if tier != want {
			t.Fatalf("request %d: tier %s, want %s", i, tier, want)
		}
	}
	// A change demotes straight to active.
	if got := tr.Update(map[string]string{"file:a.go": "h2"})["file:a.go"]; got != Active || tr.N("file:a.go") != 0 {
		t.Fatalf("changed item: tier %s N %d", got, tr.N("file:a.go"))
	}
	// An absent item is forgotten.
	tr.Update(map[string]string{})
	if tr.N("file:a.go") != -1 {
		t.Fatal("absent item still tracked")
	}
}

func TestKeysOrderHistoryNumerically(t *testing.T) {
	got := Keys(map[string]Tier{"history:10": L1, "history:2": L1, "history:1": L1, "file:z": L2}, L1)
	if len(got) != 3 || got[0] != "history:1" || got[1] != "history:2" || got[2] != "history:10" {
		t.Fatalf("%v", got)
	}
}

// run feeds the tracker one request per element of reqs and returns the
// tiers of the last.
func run(tr *Tracker, reqs ...map[string]string) map[string]Tier {
	var out map[string]Tier
	for _, r := range reqs {
		out = tr.Update(r)
	}
	return out
}

func repeat(n int, r map[string]string) []map[string]string {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// Rule 4: an item eligible for a more stable tier waits until that tier's
// cache is broken anyway; rule 5: promotions out of a tier let the items
// below follow in the same request.
func TestPromoteOnlyIntoBrokenTierAndRipple(t *testing.T) {
	th := Thresholds{L3: 1, L2: 2, L1: 3, L0: 4}
	tr := &Tracker{Thresholds: th}
	x := map[string]string{"x": "1"}
	// x climbs through empty tiers, one per request: L0 after 4 unchanged.
	if got := run(tr, repeat(5, x)...)["x"]; got != L0 {
		t.Fatalf("x in %s, want L0 (every tier was empty)", got)
	}
	// y climbs to L1, then is eligible for L0 (N=4) but L0 holds x,
	// unchanged: y waits in L1.
	xy := map[string]string{"x": "1", "y": "1"}
	got := run(tr, repeat(5, xy)...)
	if got["y"] != L1 || tr.N("y") != 4 {
		t.Fatalf("y in %s with N=%d, want to wait in L1 with N=4", got["y"], tr.N("y"))
	}
	// z climbs to L2 (N=2).
	xyz := map[string]string{"x": "1", "y": "1", "z": "1"}
	got = run(tr, repeat(3, xyz)...)
	if got["z"] != L2 || got["y"] != L1 {
		t.Fatalf("z in %s, y in %s; want z in L2, y still waiting in L1", got["z"], got["y"])
	}
	// x changes: L0 is broken, so y moves up into it; y leaving L1 (and
	// L0 breaking before it) breaks L1, so z, now eligible for L1, follows
	// in the same request (ripple).
	got = tr.Update(map[string]string{"x": "2", "y": "1", "z": "1"})
	if got["x"] != Active || got["y"] != L0 || got["z"] != L1 {
		t.Fatalf("after x changed: x %s y %s z %s; want active, L0, L1", got["x"], got["y"], got["z"])
	}
	// Eager promotes at once.
	eager := &Tracker{Thresholds: th, Eager: true}
	run(eager, repeat(5, x)...)
	if got := run(eager, repeat(5, xy)...)["y"]; got != L0 {
		t.Fatalf("eager: y in %s, want L0", got)
	}
}
