// Package otlpenv builds the OpenTelemetry SDK strata's CLI exports its
// traces and metrics with (docs/telemetry.md): the official OTLP exporters
// (HTTP or gRPC), configured only by the standard OTEL_* environment
// variables, off unless they ask for it. Package telemetry turns a
// session's events into the spans and metrics; this package is apart so
// that a library user with its own providers does not link the exporters.
package otlpenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// ShutdownTimeout bounds how long SDK.Shutdown waits for the last spans and
// metrics to reach the collector: a dead or slow collector delays strata's
// exit by at most this much, then costs a warning.
const ShutdownTimeout = 3 * time.Second

// SDK is the OpenTelemetry SDK FromEnv configured: the providers to hand to
// strata.Options, and Shutdown to flush them on exit.
type SDK struct {
	// TracerProvider exports spans (nil when OTEL_TRACES_EXPORTER=none).
	TracerProvider *sdktrace.TracerProvider
	// MeterProvider exports metrics (nil when OTEL_METRICS_EXPORTER=none).
	MeterProvider *metric.MeterProvider
}

// Configured reports whether the environment asks for telemetry: an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT, or the _TRACES_ / _METRICS_ one)
// or OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER=otlp, and not
// OTEL_SDK_DISABLED=true.
func Configured() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"} {
		if os.Getenv(k) != "" {
			return true
		}
	}
	return os.Getenv("OTEL_TRACES_EXPORTER") == "otlp" || os.Getenv("OTEL_METRICS_EXPORTER") == "otlp"
}

// FromEnv builds the SDK from the OTEL_* environment variables, or returns
// nil (and no error) when Configured is false: telemetry is off unless
// asked for. The OTLP exporters read the endpoint, headers, timeout,
// compression and certificates themselves; OTEL_EXPORTER_OTLP_PROTOCOL (or
// its _TRACES_ / _METRICS_ form) picks grpc or http/protobuf (the default);
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the resource (service
// "strata" by default); OTEL_TRACES_SAMPLER and OTEL_BSP_* /
// OTEL_METRIC_EXPORT_INTERVAL tune the SDK as usual. Exports run in the
// background; their failures (a dead collector) go to warn, once per kind
// of failure, and never reach the agent loop. An unknown protocol or
// exporter name is an error naming the variable.
func FromEnv(ctx context.Context, version string, warn func(string)) (*SDK, error) {
	if !Configured() {
		return nil, nil
	}
	setErrorHandler(warn)
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("strata"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("otlpenv: resource: %w", err)
	}
	sdk := &SDK{}
	if os.Getenv("OTEL_TRACES_EXPORTER") != "none" {
		exp, err := traceExporter(ctx)
		if err != nil {
			return nil, err
		}
		sdk.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if os.Getenv("OTEL_METRICS_EXPORTER") != "none" {
		exp, err := metricExporter(ctx)
		if err != nil {
			return nil, errors.Join(err, sdk.Shutdown(ctx))
		}
		sdk.MeterProvider = metric.NewMeterProvider(metric.WithReader(metric.NewPeriodicReader(exp)), metric.WithResource(res))
	}
	return sdk, nil
}

// protocol returns the OTLP protocol for signal ("TRACES", "METRICS").
func protocol(signal string) (string, error) {
	p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	name := "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"
	if p == "" {
		p, name = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("otlpenv: %s=%s: unsupported (valid: grpc, http/protobuf)", name, p)
}

func traceExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	p, err := protocol("TRACES")
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	if p == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("otlpenv: OTLP trace exporter (%s): %w", p, err)
	}
	return exp, nil
}

func metricExporter(ctx context.Context) (metric.Exporter, error) {
	p, err := protocol("METRICS")
	if err != nil {
		return nil, err
	}
	var exp metric.Exporter
	if p == "grpc" {
		exp, err = otlpmetricgrpc.New(ctx)
	} else {
		exp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("otlpenv: OTLP metric exporter (%s): %w", p, err)
	}
	return exp, nil
}

// Shutdown flushes and stops the providers, waiting at most
// ShutdownTimeout; nil-safe. Its error (a collector that could not be
// reached) is for a warning: nothing else depends on it.
func (s *SDK) Shutdown(ctx context.Context) error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
	defer cancel()
	var errs []error
	if s.TracerProvider != nil {
		errs = append(errs, s.TracerProvider.Shutdown(ctx))
	}
	if s.MeterProvider != nil {
		errs = append(errs, s.MeterProvider.Shutdown(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("otlpenv: flush on exit: %w", err)
	}
	return nil
}

var warned sync.Map // failure text → struct{}: each kind once

// setErrorHandler sends the SDK's background errors (failed exports) to
// warn, each distinct message once.
func setErrorHandler(warn func(string)) {
	if warn == nil {
		return
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		msg := err.Error()
		if _, seen := warned.LoadOrStore(msg, struct{}{}); !seen {
			warn("telemetry: " + msg + " (the run goes on; its spans or metrics may be lost)")
		}
	}))
}
