package stability

import "testing"

func TestPromotionAndDemotion(t *testing.T) {
	var tr Tracker
	var tier Tier
	for i := 0; i <= 12; i++ {
		tier = tr.Update(map[string]string{"file:a.go": "h1"})["file:a.go"]
		want := Active
		switch {
		case i >= 12:
			want = L0
		case i >= 9:
			want = L1
		case i >= 6:
			want = L2
		case i >= 3:
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
