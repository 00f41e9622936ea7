package durable

import (
	"context"

	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/strata-agent/strata/llm"
)

// tracerName names the tracer of durable's spans.
const tracerName = "github.com/strata-agent/strata/durable"

// Tracing returns Temporal's OpenTelemetry interceptor
// (go.temporal.io/sdk/contrib/opentelemetry) on tp: set it on the clients
// of submitters and workers (client.Options.Interceptors; a worker built on
// such a client applies it too, so do not add it to worker.Options again),
// and the client's StartWorkflow and UpdateWorkflow spans,
// the workflow's and its activities' spans on the workers and, when
// WorkerOptions.Options.TracerProvider is set, the activities' GenAI chat
// and execute_tool spans join one trace, carried in the workflow's headers
// (W3C trace context and baggage). It fails only when the interceptor
// cannot be built.
func Tracing(tp trace.TracerProvider) (interceptor.Interceptor, error) {
	return temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer(tracerName)})
}

// chatSpan starts the GenAI "chat" span of a model-call activity (a child
// of the activity's span; a no-op without a TracerProvider).
func (a *Activities) chatSpan(ctx context.Context, in ModelCallInput, provider string) (context.Context, trace.Span) {
	tp := a.opts.Options.TracerProvider
	if tp == nil {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span
	}
	return tp.Tracer(tracerName).Start(ctx, "chat "+in.Request.Model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameKey.String(provider),
			semconv.GenAIRequestModel(in.Request.Model), semconv.GenAIConversationID(in.Spec.SessionID)))
}

// endChat ends a chat span with the response's usage or the error.
func endChat(span trace.Span, resp *llm.Response, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	} else if resp != nil {
		u := resp.Usage
		span.SetAttributes(semconv.GenAIResponseModel(resp.Model), semconv.GenAIResponseFinishReasons(string(resp.StopReason)),
			semconv.GenAIUsageInputTokens(int(u.Input+u.CacheRead+u.CacheWrite)), semconv.GenAIUsageOutputTokens(int(u.Output)))
	}
	span.End()
}

// toolSpan starts the GenAI "execute_tool" span of a tool-call activity.
func (a *Activities) toolSpan(ctx context.Context, in ToolCallInput) (context.Context, trace.Span) {
	tp := a.opts.Options.TracerProvider
	if tp == nil {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span
	}
	return tp.Tracer(tracerName).Start(ctx, "execute_tool "+in.Call.Name, trace.WithAttributes(semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(in.Call.Name), semconv.GenAIToolCallID(in.Call.ID), semconv.GenAIToolType("function"),
		semconv.GenAIConversationID(in.Spec.SessionID)))
}
