package otlpenv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-agent/strata/telemetry/otlpenv"
)

// clearEnv unsets every variable FromEnv reads.
func clearEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
		t.Setenv(k, "")
	}
}

// Telemetry is off unless an OTEL_* variable asks for it, and
// OTEL_SDK_DISABLED=true turns it off again; each signal can be turned off
// alone; an unsupported protocol is an error naming its variable.
func TestFromEnv(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name            string
		env             map[string]string
		traces, metrics bool
		err             string
	}{
		{name: "nothing set"},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, traces: true, metrics: true},
		{name: "traces endpoint only, grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317",
			"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, traces: true, metrics: true},
		{name: "disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "metrics off", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_METRICS_EXPORTER": "none"}, traces: true},
		{name: "bad protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, err: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			sdk, err := otlpenv.FromEnv(ctx, "test", nil)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v; want one naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer sdk.Shutdown(ctx)
			gotT, gotM := sdk != nil && sdk.TracerProvider != nil, sdk != nil && sdk.MeterProvider != nil
			if gotT != c.traces || gotM != c.metrics {
				t.Errorf("traces %v, metrics %v; want %v, %v", gotT, gotM, c.traces, c.metrics)
			}
		})
	}
}
