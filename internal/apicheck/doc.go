// Package apicheck holds the public-API audit of strata's library packages
// (see apicheck_test.go): no exported identifier of a checked package may
// mention a type from a module other than strata and the standard library,
// so callers never import an SDK to use strata, and an SDK upgrade never
// changes strata's API; the one exemption is the OpenTelemetry API's provider
// interfaces (openTelemetryAPI). The package has no code of its own.
package apicheck
