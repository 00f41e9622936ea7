package durable

import (
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
)

// dial connects to the server at addr (waiting up to a minute for it to
// answer) with the given interceptors; the client closes with the test.
func dial(t *testing.T, addr string, in ...interceptor.ClientInterceptor) client.Client {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := client.Dial(client.Options{HostPort: addr, Logger: quietLogger, Interceptors: in})
		if err == nil {
			if _, err = c.CheckHealth(t.Context(), &client.CheckHealthRequest{}); err == nil {
				t.Cleanup(c.Close)
				return c
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("Temporal server at %s did not answer: %v", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
