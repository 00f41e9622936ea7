package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP endpoint on 127.0.0.1 that decodes what the
// official exporters send (protobuf) and keeps it.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	metrics []*metricpb.Metric
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var in coltracepb.ExportTraceServiceRequest
		if !decode(t, w, req, &in) {
			return
		}
		r.mu.Lock()
		for _, rs := range in.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		reply(w, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST /v1/metrics", func(w http.ResponseWriter, req *http.Request) {
		var in colmetricpb.ExportMetricsServiceRequest
		if !decode(t, w, req, &in) {
			return
		}
		r.mu.Lock()
		for _, rm := range in.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				r.metrics = append(r.metrics, sm.Metrics...)
			}
		}
		r.mu.Unlock()
		reply(w, &colmetricpb.ExportMetricsServiceResponse{})
	})
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

func decode(t *testing.T, w http.ResponseWriter, req *http.Request, m proto.Message) bool {
	body, err := io.ReadAll(req.Body)
	if err == nil {
		err = proto.Unmarshal(body, m)
	}
	if err != nil {
		t.Errorf("receiver: %s: %v", req.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, m proto.Message) {
	b, _ := proto.Marshal(m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

// providers returns a tracer and a meter provider exporting to r with the
// official OTLP/HTTP exporters; flush shuts them down (everything sent).
func (r *receiver) providers(t *testing.T) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider, func()) {
	ctx := context.Background()
	te, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(r.srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(r.srv.URL+"/v1/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(te))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)))
	return tp, mp, func() {
		if err := tp.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		if err := mp.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}
}

// attr returns span attribute key as a string ("" when absent; arrays
// joined by ",").
func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return anyString(kv.Value)
		}
	}
	return ""
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.Value.(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_DoubleValue:
		return "float"
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	case *commonpb.AnyValue_ArrayValue:
		out := ""
		for i, e := range x.ArrayValue.Values {
			if i > 0 {
				out += ","
			}
			out += anyString(e)
		}
		return out
	}
	return ""
}
