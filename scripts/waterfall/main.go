// Command waterfall draws one trace of an OpenTelemetry Collector file
// exporter's output (OTLP/JSON lines) as a waterfall SVG (docs/telemetry.md):
//
//	go run ./scripts/waterfall -in spans.json -out docs/telemetry-waterfall.svg
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/strata-agent/strata/internal/waterfall"
)

func main() {
	in := flag.String("in", "", "the file exporter's output (OTLP/JSON, one request per line)")
	out := flag.String("out", "", "the SVG to write")
	trace := flag.String("trace", "", "trace id (hex; default: the first span's trace)")
	title := flag.String("title", "strata run", "the picture's title")
	flag.Parse()
	if err := run(*in, *out, *trace, *title); err != nil {
		fmt.Fprintln(os.Stderr, "waterfall:", err)
		os.Exit(1)
	}
}

func run(in, out, trace, title string) error {
	if in == "" || out == "" {
		return fmt.Errorf("-in and -out are required")
	}
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	spans, _, err := waterfall.Read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := waterfall.SVG(w, spans, trace, title); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
