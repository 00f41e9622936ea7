package workflow
import ("testing";"os")
func TestTmp(t *testing.T) {
	d, err := Load("../examples/workflows/fix-tests.yaml")
	t.Log(d != nil, err)
	for _, src := range []string{"name: x\nstages:\n  - name: a\n    body: hi\n    turnCap: 0\n", "name: x\nstages:\n  - name: a\n    body: hi\n    bogus: 1\n", "name: x\nstages:\n  - name: g\n    parallel:\n      - name: a\n        body: x\n        next: {ok: end}\n", "name: x\nstages:\n  - name: a\n    body: hi\n    next: {ok: nowhere}\n"} {
		_, err := Parse("f.yaml", []byte(src)); t.Log(err)
	}
	_ = os.Stdout
}
