package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/strata-agent/strata/session"
)

// The claim check (docs/durable.md, "Claim check"): a payload codec that
// moves payloads over a threshold out of Temporal into a content-addressed
// store the workers share (session.Payloads) and puts a small reference in
// their place.

// DefaultClaimThreshold is the claim check's threshold when
// DataConverterWith is given 0: payloads larger than 128 KiB after
// compression (proto-encoded size) go to the store. Temporal's server warns
// at 256 KB per payload and fails at 2 MB; one workflow task's commands
// travel in a gRPC message of at most 4 MB, which the activities a
// response schedules at once share; and every payload under the threshold
// stays in the history (50 MB cap, continue-as-new suggested far
// earlier). Half the warning level keeps a payload's metadata and a
// task's other commands clear of all three, while a conversation of a few
// dozen compressed turns still travels inline.
const DefaultClaimThreshold = 128 << 10

// MinClaimThreshold is the smallest threshold DataConverterWith accepts:
// every answer a client receives (queries, update results) is bounded by
// MaxAnswerBytes of JSON, so that it never becomes a reference a client
// without the store cannot read; 16 KiB more leaves room for the payload's
// metadata.
const MinClaimThreshold = MaxAnswerBytes + 16<<10

// ClaimEncoding is the metadata encoding of a claim-check reference
// payload: its data is the JSON of {"sha256": KEY, "size": N}, KEY the
// session.PayloadKey of the proto encoding of the payload it stands for (N
// bytes), as stored in session.Payloads.
const ClaimEncoding = "binary/strata-claim-check"

// claimTimeout bounds one store call of the codec (which has no context of
// its own).
const claimTimeout = time.Minute

// claimRef is the data of a reference payload.
type claimRef struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// claimCodec is the claim check's converter.PayloadCodec. With a nil
// store it encodes nothing and fails, clearly, on a reference (a client
// without the workers' store). The SDK gives it the workflow each payload
// belongs to (converter.PayloadCodecWithSerializationContext), so a stored
// payload is referenced by its session (session.Payloads).
type claimCodec struct {
	*claimState
	session string // the session whose payloads these are ("" = unknown)
}

// claimState is what the codecs of one converter share.
type claimState struct {
	store     session.Payloads
	threshold int
	mu        sync.Mutex
	stored    map[[2]string]bool // session and key this converter stored (a replay encodes the same commands again)
}

// WithSerializationContext implements
// converter.PayloadCodecWithSerializationContext: the codec of the payloads
// of one workflow (its activities' included), whose session id it takes
// from the workflow id (SessionWorkflow, StagesWorkflow and their stage
// children).
func (c *claimCodec) WithSerializationContext(sc converter.SerializationContext) converter.PayloadCodec {
	var id string
	switch x := sc.(type) {
	case converter.WorkflowSerializationContext:
		id = x.WorkflowID
	case converter.ActivitySerializationContext:
		id = x.WorkflowID
	}
	return &claimCodec{claimState: c.claimState, session: sessionOfWorkflow(id)}
}

// sessionOfWorkflow returns the session id of one of durable's workflow
// ids ("strata-session-S", "strata-stages-S", "strata-stages-S/stage/n"),
// "" for another.
func sessionOfWorkflow(id string) string {
	for _, prefix := range []string{WorkflowIDPrefix, StagesIDPrefix} {
		if rest, ok := strings.CutPrefix(id, prefix); ok {
			s, _, _ := strings.Cut(rest, "/")
			return s
		}
	}
	return ""
}

// maxRemembered bounds claimCodec.stored; past it the set starts over.
const maxRemembered = 4096

// DataConverterWith returns DataConverter's converter with the claim
// check: a payload whose compressed, proto-encoded size is over threshold
// bytes (0 = DefaultClaimThreshold) is stored in store under its SHA-256
// and replaced by a reference payload (ClaimEncoding) of about 130 bytes;
// decoding a reference reads it back and checks its hash. Smaller payloads
// and those written by DataConverter (zlib or plain JSON) are unchanged.
// Workers that share store (strata worker --store) should all use it; a
// client given the same store decodes references too, and every other
// client uses DataConverter, which never receives one as long as the
// workers bound their answers (MaxAnswerBytes). It fails on a nil store or
// a threshold under MinClaimThreshold.
func DataConverterWith(store session.Payloads, threshold int) (converter.DataConverter, error) {
	if store == nil {
		return nil, errors.New("durable: claim check: no payload store (want a session.Payloads: the workers' session store)")
	}
	if threshold == 0 {
		threshold = DefaultClaimThreshold
	}
	if threshold < MinClaimThreshold {
		return nil, fmt.Errorf("durable: claim check threshold %d bytes: want at least MinClaimThreshold (%d bytes), above the bound of a client's answers (MaxAnswerBytes)", threshold, MinClaimThreshold)
	}
	return newConverter(&claimCodec{claimState: &claimState{store: store, threshold: threshold, stored: map[[2]string]bool{}}}), nil
}

// newConverter is the JSON converter with zlib under the claim check:
// encoding compresses first, then checks the size (the codecs apply last
// to first; converter.NewCodecDataConverter).
func newConverter(cc *claimCodec) converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), cc, converter.NewZlibCodec(converter.ZlibCodecOptions{}))
}

// Encode implements converter.PayloadCodec.
func (c *claimCodec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	if c.claimState == nil || c.store == nil {
		return ps, nil
	}
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if proto.Size(p) <= c.threshold {
			out[i] = p
			continue
		}
		data, err := proto.MarshalOptions{Deterministic: true}.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("durable: claim check: encode a %d-byte payload: %w", proto.Size(p), err)
		}
		key := session.PayloadKey(data)
		if err := c.put(key, data); err != nil {
			return nil, err
		}
		ref, _ := json.Marshal(claimRef{SHA256: key, Size: len(data)}) // two plain fields: cannot fail
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(ClaimEncoding)}, Data: ref}
	}
	return out, nil
}

// put stores data under key for the codec's session unless it stored it
// already.
func (c *claimCodec) put(key string, data []byte) error {
	k := [2]string{c.session, key}
	c.mu.Lock()
	done := c.stored[k]
	c.mu.Unlock()
	if done {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	if err := c.store.PutPayload(ctx, c.session, key, data); err != nil {
		return fmt.Errorf("durable: claim check: store a %d-byte payload of session %q: %w", len(data), c.session, err)
	}
	c.mu.Lock()
	if len(c.stored) >= maxRemembered {
		c.stored = map[[2]string]bool{}
	}
	c.stored[k] = true
	c.mu.Unlock()
	return nil
}

// Decode implements converter.PayloadCodec.
func (c *claimCodec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != ClaimEncoding {
			out[i] = p
			continue
		}
		var ref claimRef
		if err := json.Unmarshal(p.GetData(), &ref); err != nil || len(ref.SHA256) != 64 {
			return nil, fmt.Errorf("durable: claim check: a %s payload whose reference %q is not {\"sha256\": 64 hex digits, \"size\": N}", ClaimEncoding, p.GetData())
		}
		if c.claimState == nil || c.store == nil {
			return nil, fmt.Errorf("durable: a %d-byte payload (sha256 %s) was moved out of Temporal by the workers' claim check, and this client has no payload store to read it from: "+
				"give the client the workers' store (durable.DataConverterWith), or keep what clients receive under the workers' threshold (durable.MaxAnswerBytes; docs/durable.md, \"Claim check\")", ref.Size, ref.SHA256)
		}
		ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
		data, err := c.store.Payload(ctx, ref.SHA256)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("durable: claim check: read the %d-byte payload %s from the payload store (the workers' --store; every worker and client decoding it must share it): %w", ref.Size, ref.SHA256, err)
		}
		if got := session.PayloadKey(data); got != ref.SHA256 {
			return nil, fmt.Errorf("durable: claim check: the payload store returned %d bytes for %s whose sha256 is %s: refused (the stored payload was changed, or this is not the store the workers wrote)", len(data), ref.SHA256, got)
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(data, &orig); err != nil {
			return nil, fmt.Errorf("durable: claim check: payload %s is not an encoded Temporal payload: %w", ref.SHA256, err)
		}
		out[i] = &orig
	}
	return out, nil
}
