package main

import (
	"strings"
	"testing"
)

// Leaf tests count (a parent with subtests is not an attack of its own),
// by outcome; TestLimit… tests count as limits; other tests are ignored.
func TestCountsLeafAttackTests(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestAttackA"}`,
		`{"Action":"pass","Package":"p","Test":"TestAttackA/one"}`,
		`{"Action":"fail","Package":"p","Test":"TestAttackA/two"}`,
		`{"Action":"fail","Package":"p","Test":"TestAttackA"}`,
		`{"Action":"pass","Package":"p","Test":"TestAttackB"}`,
		`{"Action":"skip","Package":"q","Test":"TestAttackB"}`,
		`{"Action":"pass","Package":"q","Test":"TestLimitX/a"}`,
		`{"Action":"pass","Package":"q","Test":"TestLimitX/b"}`,
		`{"Action":"pass","Package":"q","Test":"TestLimitX"}`,
		`{"Action":"pass","Package":"q","Test":"TestOther"}`,
		`{"Action":"pass","Package":"q","Test":"TestLimitsAndBeforeTurn"}`,
		`# build output`,
	}, "\n")
	f, err := count(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if f.Attacks != 3 || f.Held != 2 || f.Failed != 1 || f.Skipped != 1 || f.Limits != 2 || len(f.Failures) != 1 {
		t.Errorf("figures %+v", f)
	}
	if _, err := count(strings.NewReader("{not json")); err == nil {
		t.Error("bad input gave no error")
	}
	out, changed, err := replaceFigures([]byte("a <!-- security-figures -->old<!-- /security-figures --> b"), f.Line())
	if err != nil || !changed || !strings.Contains(string(out), "3 attacks tried, 2 held") {
		t.Errorf("replace: %v %v %s", err, changed, out)
	}
	if _, _, err := replaceFigures([]byte("no markers"), "x"); err == nil {
		t.Error("a README without markers gave no error")
	}
}
