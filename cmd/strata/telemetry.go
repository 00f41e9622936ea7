package main

import (
	"context"
	"runtime/debug"
	"sync"

	"github.com/strata-agent/strata"
	"github.com/strata-agent/strata/telemetry/otlpenv"
)

// otel is the OpenTelemetry SDK of this process, built from the OTEL_*
// environment by startTelemetry (nil: telemetry off, the default;
// docs/telemetry.md).
var otel struct {
	once sync.Once
	sdk  *otlpenv.SDK
}

// startTelemetry builds the SDK once, when the environment configures it.
// A configuration it cannot use is a warning: the run goes on without
// telemetry.
func startTelemetry() *otlpenv.SDK {
	otel.once.Do(func() {
		version := "unknown"
		if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
			version = info.Main.Version
		}
		sdk, err := otlpenv.FromEnv(context.Background(), version, warn)
		if err != nil {
			warn(err.Error() + "; running without telemetry")
			return
		}
		otel.sdk = sdk
	})
	return otel.sdk
}

// withTelemetry hands the SDK's providers to o (nothing when telemetry is
// off).
func withTelemetry(o *strata.Options) {
	sdk := startTelemetry()
	if sdk == nil {
		return
	}
	if sdk.TracerProvider != nil {
		o.TracerProvider = sdk.TracerProvider
	}
	if sdk.MeterProvider != nil {
		o.MeterProvider = sdk.MeterProvider
	}
}

// flushTelemetry sends what the SDK still holds, waiting at most
// otlpenv.ShutdownTimeout; a collector that cannot be reached costs a
// warning. Called on exit, also after a second Ctrl-C.
func flushTelemetry() {
	if otel.sdk == nil {
		return
	}
	if err := otel.sdk.Shutdown(context.Background()); err != nil {
		warn(err.Error())
	}
}
