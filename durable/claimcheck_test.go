package durable

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/strata-agent/strata/session"
)

// randomText returns n bytes of base64 text from crypto/rand: zlib
// shrinks it to about three quarters, no further.
func randomText(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)[:n]
}

func claimConverter(t *testing.T, store session.Payloads, threshold int) converter.DataConverter {
	t.Helper()
	dc, err := DataConverterWith(store, threshold)
	if err != nil {
		t.Fatal(err)
	}
	return dc
}

// TestClaimCheckRoundTrip: a 3 MB incompressible value becomes a reference
// of under 200 bytes whose payload is in the store under its SHA-256, and
// decodes back to the value; a small value is the same payload the plain
// converter makes.
func TestClaimCheckRoundTrip(t *testing.T) {
	store := session.NewMemory()
	dc := claimConverter(t, store, 0)
	big := randomText(t, 3<<20)
	p, err := dc.ToPayload(big)
	if err != nil {
		t.Fatal(err)
	}
	if enc := string(p.Metadata[converter.MetadataEncoding]); enc != ClaimEncoding || proto.Size(p) > 200 {
		t.Fatalf("a 3 MB value encoded as %q, %d bytes; want a reference (%s) under 200 bytes", enc, proto.Size(p), ClaimEncoding)
	}
	t.Logf("a %d-byte value: a %d-byte reference %s", len(big), proto.Size(p), p.Data)
	var ref claimRef
	if err := converterJSON(p.Data, &ref); err != nil {
		t.Fatal(err)
	}
	stored, err := store.Payload(t.Context(), ref.SHA256)
	if err != nil || len(stored) != ref.Size || session.PayloadKey(stored) != ref.SHA256 {
		t.Fatalf("the store holds %d bytes under %s (%v); want %d", len(stored), ref.SHA256, err, ref.Size)
	}
	var back string
	if err := dc.FromPayload(p, &back); err != nil || back != big {
		t.Fatalf("round trip: %d bytes back, %v", len(back), err)
	}
	small := map[string]string{"text": "a small request"}
	ps, err := dc.ToPayload(small)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := DataConverter().ToPayload(small)
	if !proto.Equal(ps, plain) {
		t.Errorf("a small value: %v; want the plain converter's payload %v", ps, plain)
	}
}

// converterJSON decodes a reference's data.
func converterJSON(data []byte, v any) error {
	return converter.GetDefaultDataConverter().FromPayload(&commonpb.Payload{
		Metadata: map[string][]byte{converter.MetadataEncoding: []byte(converter.MetadataEncodingJSON)}, Data: data}, v)
}

// TestClaimCheckThresholdIsAfterCompression: a value is stored apart
// exactly when its compressed payload is over the threshold — a 1 MB value
// that zlib packs small stays inline, random text over the threshold does
// not, and at MinClaimThreshold the values around it fall either side.
func TestClaimCheckThresholdIsAfterCompression(t *testing.T) {
	dc := claimConverter(t, session.NewMemory(), MinClaimThreshold)
	values := []string{strings.Repeat("all work and no play ", 50_000), randomText(t, MinClaimThreshold)}
	for n := MinClaimThreshold - 8<<10; n < MinClaimThreshold*3/2; n += 4 << 10 {
		values = append(values, randomText(t, n))
	}
	var inline, apart int
	for _, v := range values {
		packed, err := DataConverter().ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		p, err := dc.ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		isRef := string(p.Metadata[converter.MetadataEncoding]) == ClaimEncoding
		if want := proto.Size(packed) > MinClaimThreshold; isRef != want {
			t.Errorf("a %d-byte value compressed to %d bytes: reference %v, want %v", len(v), proto.Size(packed), isRef, want)
		}
		if isRef {
			apart++
		} else {
			inline++
		}
	}
	if inline < 2 || apart < 2 {
		t.Errorf("%d values inline, %d apart: the sizes do not straddle the threshold", inline, apart)
	}
}

// tampered returns the stored bytes with one bit flipped.
type tampered struct{ session.Payloads }

func (s tampered) Payload(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Payloads.Payload(ctx, key)
	if len(b) > 0 {
		b[len(b)/2] ^= 1
	}
	return b, err
}

// TestClaimCheckRefusesWhatDoesNotMatch: a stored payload changed in the
// store is refused (its hash no longer matches), a reference the store
// lacks names the store, and a client without a store names the setting.
func TestClaimCheckRefusesWhatDoesNotMatch(t *testing.T) {
	store := session.NewMemory()
	p, err := claimConverter(t, store, 0).ToPayload(randomText(t, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	var s string
	err = claimConverter(t, tampered{store}, 0).FromPayload(p, &s)
	if err == nil || !strings.Contains(err.Error(), "whose sha256 is") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a changed payload: %v; want a refusal naming the hash", err)
	}
	err = claimConverter(t, session.NewMemory(), 0).FromPayload(p, &s)
	if !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "--store") {
		t.Errorf("a payload the store lacks: %v; want ErrNotFound naming the workers' --store", err)
	}
	err = DataConverter().FromPayload(p, &s)
	if err == nil || !strings.Contains(err.Error(), "no payload store") || !strings.Contains(err.Error(), "DataConverterWith") {
		t.Errorf("a client without a store: %v; want an error naming DataConverterWith", err)
	}
	if _, err := DataConverterWith(store, MinClaimThreshold-1); err == nil || !strings.Contains(err.Error(), "MinClaimThreshold") {
		t.Errorf("a threshold under the minimum: %v", err)
	}
	if _, err := DataConverterWith(nil, 0); err == nil {
		t.Error("a nil store was accepted")
	}
}

// TestClaimCheckDecodesOldPayloads: payloads written by DataConverter
// (zlib) and by Temporal's default converter (plain JSON) decode with the
// claim check.
func TestClaimCheckDecodesOldPayloads(t *testing.T) {
	dc := claimConverter(t, session.NewMemory(), 0)
	v := strings.Repeat("the conversation so far. ", 10_000)
	for name, old := range map[string]converter.DataConverter{"zlib": DataConverter(), "plain": converter.GetDefaultDataConverter()} {
		p, err := old.ToPayload(v)
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := dc.FromPayload(p, &back); err != nil || back != v {
			t.Errorf("%s payload (%s): %d bytes back, %v", name, p.Metadata[converter.MetadataEncoding], len(back), err)
		}
	}
}

// TestClaimCheckReferencesTheSession: a payload stored while encoding for
// a session's workflow, a stage workflow or a stage execution's child (the
// SDK's serialization context) is referenced by that session, so it goes
// with it; one of another workflow by none.
func TestClaimCheckReferencesTheSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "strata.db")
	store, err := session.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, id := range []string{"s1", "s2", "s3"} {
		if _, err := store.CreateSession(t.Context(), session.SessionMeta{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	dc := claimConverter(t, store, 0).(converter.DataConverterWithSerializationContext)
	for _, c := range []struct {
		sc   converter.SerializationContext
		want string
	}{
		{converter.WorkflowSerializationContext{WorkflowID: WorkflowID("s1")}, "s1"},
		{converter.ActivitySerializationContext{WorkflowID: stagesID("s2")}, "s2"},
		{converter.ActivitySerializationContext{WorkflowID: stagesID("s3") + "/review/2"}, "s3"},
		{converter.WorkflowSerializationContext{WorkflowID: "someone-else"}, ""},
	} {
		p, err := dc.WithSerializationContext(c.sc).ToPayload(randomText(t, 300_000))
		if err != nil {
			t.Fatal(err)
		}
		var ref claimRef
		if err := converterJSON(p.Data, &ref); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		rows, err := db.Query(`SELECT session_id FROM payload_refs WHERE sha256 = ?`, ref.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			got = append(got, s)
		}
		rows.Close()
		db.Close()
		if want := []string{c.want}; c.want == "" && len(got) != 0 || c.want != "" && !slices.Equal(got, want) {
			t.Errorf("%+v: referenced by %q; want %q", c.sc, got, c.want)
		}
	}
}
