// Package telemetry turns a session's agent loop into OpenTelemetry traces
// and metrics following the GenAI semantic conventions (docs/telemetry.md):
// an invoke_agent span per user prompt's loop, a `chat {model}` span per
// model call and an `execute_tool {name}` span per tool call, parented as
// they happened (a sub-agent's loop under its parent's tool span), timed by
// the events' own times, and the gen_ai.client.token.usage and
// gen_ai.client.operation.duration histograms.
//
// It is built only on the event bus (package event): an Observer subscribes
// to one session's events. It uses the OpenTelemetry API alone; package
// telemetry/otlpenv builds the SDK and OTLP exporters from the OTEL_*
// environment for the CLI, and library users pass their own providers
// (strata.Options.TracerProvider / MeterProvider).
package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/genaiconv"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/strata-agent/strata/event"
	"github.com/strata-agent/strata/llm"
)

// ScopeName is the instrumentation scope of strata's spans and metrics.
const ScopeName = "github.com/strata-agent/strata/telemetry"

// CaptureContentEnv is the GenAI conventions' opt-in for message contents:
// "true" adds prompts, answers, tool arguments and tool results to the spans
// (gen_ai.input.messages, gen_ai.output.messages, gen_ai.tool.call.arguments,
// gen_ai.tool.call.result). Off by default: contents may be sensitive.
const CaptureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// Config configures an Observer.
type Config struct {
	// TracerProvider receives the spans (nil: no spans).
	TracerProvider trace.TracerProvider
	// MeterProvider receives the metrics (nil: no metrics).
	MeterProvider metric.MeterProvider
	// SessionID is the stored session's id: every span's
	// gen_ai.conversation.id.
	SessionID string
	// Layout is the request layout's name (strata.layout) when the
	// requests' breakdown does not say.
	Layout string
	// CaptureContent adds message contents to the spans; ContentFromEnv
	// reads the conventions' opt-in variable.
	CaptureContent bool
}

// ContentFromEnv reports whether OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
// is "true" (any case).
func ContentFromEnv() bool { return strings.EqualFold(os.Getenv(CaptureContentEnv), "true") }

// Observer turns one session's events into spans and metrics. Observe it on
// the session's bus with the Drop policy (a slow exporter never slows the
// loop); Close it when the bus is closed. Safe for concurrent use.
type Observer struct {
	cfg    Config
	tracer trace.Tracer
	tokens genaiconv.ClientTokenUsage
	dur    genaiconv.ClientOperationDuration

	mu     sync.Mutex
	agents map[string]*agentSpan // open invoke_agent spans by correlation id
	chats  map[event.TurnID]*chatSpan
	tools  []*toolSpan // open execute_tool spans, in start order
}

type agentSpan struct {
	span  trace.Span
	ctx   context.Context
	input []llm.Message // the turn's input messages, for gen_ai.input.messages
}

type chatSpan struct {
	span     trace.Span
	ctx      context.Context
	start    time.Time
	provider string
	model    string
	output   *llm.Message
}

type toolSpan struct {
	span trace.Span
	ctx  context.Context
	id   string
}

// Token-usage and duration buckets the GenAI conventions recommend for
// gen_ai.client.token.usage and gen_ai.client.operation.duration.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// NewObserver returns an observer for cfg. With neither provider set it
// records nothing.
func NewObserver(cfg Config) *Observer {
	o := &Observer{cfg: cfg, agents: map[string]*agentSpan{}, chats: map[event.TurnID]*chatSpan{}}
	tp := cfg.TracerProvider
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	o.tracer = tp.Tracer(ScopeName)
	var m metric.Meter
	if cfg.MeterProvider != nil {
		m = cfg.MeterProvider.Meter(ScopeName)
	}
	// A nil meter gives no-op instruments; the SDK's errors here are
	// invalid bucket lists, which these are not.
	o.tokens, _ = genaiconv.NewClientTokenUsage(m, metric.WithExplicitBucketBoundaries(tokenBuckets...))
	o.dur, _ = genaiconv.NewClientOperationDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...))
	return o
}

// at is the event's time, else now (an event built without one).
func at(e event.Event) time.Time {
	if e.Time.IsZero() {
		return time.Now()
	}
	return e.Time
}

// Observe records e. It never blocks on the exporter (spans are batched by
// the SDK) and ignores events it has no span for.
func (o *Observer) Observe(e event.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Kind {
	case event.SessionTurnStart:
		a := o.startAgent(e)
		if o.cfg.CaptureContent && e.Text != "" {
			a.span.SetAttributes(attribute.String("gen_ai.input.messages", messagesJSON([]llm.Message{llm.UserText(e.Text)})))
		}
	case event.TurnStart:
		a := o.agent(e)
		attrs := []attribute.KeyValue{attribute.String("strata.loop.id", e.Turn.LoopID)}
		if e.Trigger == event.TriggerSubAgent {
			attrs = append(attrs, attribute.String("strata.trigger", string(e.Trigger)))
		}
		a.span.SetAttributes(attrs...)
		a.input = nil
	case event.MessageEnd:
		o.message(e)
	case event.ProviderRequest:
		o.startChat(e)
	case event.ProviderResponse:
		o.endChat(e, "")
	case event.ProviderError:
		o.endChat(e, providerError(e))
	case event.ToolExecutionStart:
		o.startTool(e)
	case event.ToolExecutionEnd:
		o.endTool(e)
	case event.AgentStopped:
		if a := o.agents[e.CorrelationID]; a != nil {
			a.span.SetAttributes(attribute.String("strata.stopped", e.Text))
		}
	case event.SessionTurnEnd:
		o.endAgent(e)
	}
}

// parentCtx is where a new loop's span goes: under the latest open tool
// span (a sub-agent's loop runs inside its parent's use_subagent call; tool
// calls run one at a time), else at the root of a new trace.
func (o *Observer) parentCtx() context.Context {
	if n := len(o.tools); n > 0 {
		return o.tools[n-1].ctx
	}
	return context.Background()
}

func (o *Observer) startAgent(e event.Event) *agentSpan {
	ctx, span := o.tracer.Start(o.parentCtx(), "invoke_agent", trace.WithTimestamp(at(e)), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIConversationID(o.cfg.SessionID),
			attribute.String("strata.correlation_id", e.CorrelationID)))
	if o.cfg.Layout != "" {
		span.SetAttributes(attribute.String("strata.layout", o.cfg.Layout))
	}
	a := &agentSpan{span: span, ctx: ctx}
	o.agents[e.CorrelationID] = a
	return a
}

// agent returns e's loop span, starting one for a loop whose
// SessionTurnStart was not seen (dropped, or a loop driven directly).
func (o *Observer) agent(e event.Event) *agentSpan {
	if a := o.agents[e.CorrelationID]; a != nil {
		return a
	}
	return o.startAgent(e)
}

func (o *Observer) message(e event.Event) {
	if e.Message == nil || e.Turn == nil {
		return
	}
	if c := o.chats[*e.Turn]; c != nil && e.Message.Role == llm.RoleAssistant {
		m := *e.Message
		c.output = &m
		return
	}
	if a := o.agents[e.CorrelationID]; a != nil && e.Message.Role == llm.RoleUser {
		a.input = append(a.input, *e.Message)
	}
}

func (o *Observer) startChat(e event.Event) {
	if e.Turn == nil {
		return
	}
	a := o.agent(e)
	name := "chat"
	if e.Model != "" {
		name += " " + e.Model
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameChat, providerName(e.Provider),
		semconv.GenAIRequestModel(e.Model), semconv.GenAIConversationID(o.cfg.SessionID),
		attribute.String("strata.turn.id", fmt.Sprintf("%s/%d", e.Turn.LoopID, e.Turn.Index))}
	if bd := e.Breakdown; bd != nil {
		attrs = append(attrs, attribute.String("strata.layout", bd.Layout), attribute.Int("strata.breakpoints", bd.Breakpoints),
			attribute.Int("strata.request.tokens", bd.TotalTokens))
		if cost, ok := spanCacheCost(bd); ok {
			attrs = append(attrs, attribute.Float64("strata.layout.cache_cost_usd", cost))
		}
	} else if o.cfg.Layout != "" {
		attrs = append(attrs, attribute.String("strata.layout", o.cfg.Layout))
	}
	if o.cfg.CaptureContent && len(a.input) > 0 {
		attrs = append(attrs, attribute.String("gen_ai.input.messages", messagesJSON(a.input)))
	}
	ctx, span := o.tracer.Start(a.ctx, name, trace.WithTimestamp(at(e)), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	o.chats[*e.Turn] = &chatSpan{span: span, ctx: ctx, start: at(e), provider: e.Provider, model: e.Model}
}

func (o *Observer) endChat(e event.Event, errType string) {
	if e.Turn == nil {
		return
	}
	c := o.chats[*e.Turn]
	if c == nil {
		return
	}
	delete(o.chats, *e.Turn)
	end := at(e)
	model := cmpOr(e.Model, c.model)
	op, prov := genaiconv.OperationNameAttr("chat"), genaiconv.ProviderNameAttr(providerName(c.provider).Value.AsString())
	durAttrs := []attribute.KeyValue{o.dur.AttrRequestModel(c.model)}
	if errType != "" {
		c.span.SetStatus(codes.Error, cmpOr(e.Error, errorText(e.Err)))
		c.span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		durAttrs = append(durAttrs, o.dur.AttrErrorType(genaiconv.ErrorTypeAttr(errType)))
	} else {
		c.span.SetAttributes(semconv.GenAIResponseModel(model), semconv.GenAIResponseFinishReasons(string(e.StopReason)))
		if e.ResponseID != "" {
			c.span.SetAttributes(semconv.GenAIResponseID(e.ResponseID))
		}
		durAttrs = append(durAttrs, o.dur.AttrResponseModel(model))
		if u := e.Usage; u != nil {
			in := u.Input + u.CacheRead + u.CacheWrite
			c.span.SetAttributes(semconv.GenAIUsageInputTokens(int(in)), semconv.GenAIUsageOutputTokens(int(u.Output)),
				semconv.GenAIUsageCacheReadInputTokens(int(u.CacheRead)), semconv.GenAIUsageCacheCreationInputTokens(int(u.CacheWrite)))
			c.span.SetAttributes(costAttrs(model, *u)...)
			o.tokens.Record(c.ctx, in, op, prov, genaiconv.TokenTypeInput, o.tokens.AttrRequestModel(c.model), o.tokens.AttrResponseModel(model))
			o.tokens.Record(c.ctx, u.Output, op, prov, genaiconv.TokenTypeOutput, o.tokens.AttrRequestModel(c.model), o.tokens.AttrResponseModel(model))
		}
		if o.cfg.CaptureContent && c.output != nil {
			c.span.SetAttributes(attribute.String("gen_ai.output.messages", messagesJSON([]llm.Message{*c.output})))
		}
	}
	o.dur.Record(c.ctx, end.Sub(c.start).Seconds(), op, prov, durAttrs...)
	c.span.End(trace.WithTimestamp(end))
}

func (o *Observer) startTool(e event.Event) {
	if e.ToolCall == nil {
		return
	}
	a := o.agent(e)
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(e.ToolCall.Name),
		semconv.GenAIToolCallID(e.ToolCall.ID), semconv.GenAIToolType("function"), semconv.GenAIConversationID(o.cfg.SessionID)}
	if e.Turn != nil {
		attrs = append(attrs, attribute.String("strata.turn.id", fmt.Sprintf("%s/%d", e.Turn.LoopID, e.Turn.Index)))
	}
	if o.cfg.CaptureContent {
		attrs = append(attrs, attribute.String("gen_ai.tool.call.arguments", string(e.ToolCall.Input)))
	}
	ctx, span := o.tracer.Start(a.ctx, "execute_tool "+e.ToolCall.Name, trace.WithTimestamp(at(e)),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	o.tools = append(o.tools, &toolSpan{span: span, ctx: ctx, id: e.ToolCall.ID})
}

func (o *Observer) endTool(e event.Event) {
	if e.ToolCall == nil {
		return
	}
	var t *toolSpan
	for i, x := range o.tools {
		if x.id == e.ToolCall.ID {
			t = x
			o.tools = append(o.tools[:i:i], o.tools[i+1:]...)
			break
		}
	}
	if t == nil { // a call that never started (denied, not run): a span of no length
		o.startTool(e)
		t = o.tools[len(o.tools)-1]
		o.tools = o.tools[:len(o.tools)-1]
	}
	if e.ChildLoopID != "" {
		t.span.SetAttributes(attribute.String("strata.child_loop.id", e.ChildLoopID))
	}
	if e.Outcome != "" {
		t.span.SetAttributes(attribute.String("strata.tool.outcome", e.Outcome))
	}
	if e.Outcome != "" && e.Outcome != event.ToolSucceeded {
		t.span.SetStatus(codes.Error, e.Outcome)
		t.span.SetAttributes(semconv.ErrorTypeKey.String("tool_" + e.Outcome))
	}
	if o.cfg.CaptureContent && e.ToolResult != nil {
		t.span.SetAttributes(attribute.String("gen_ai.tool.call.result", resultText(*e.ToolResult)))
	}
	t.span.End(trace.WithTimestamp(at(e)))
}

func (o *Observer) endAgent(e event.Event) {
	a := o.agents[e.CorrelationID]
	if a == nil {
		return
	}
	delete(o.agents, e.CorrelationID)
	if u := e.Usage; u != nil {
		a.span.SetAttributes(semconv.GenAIUsageInputTokens(int(u.Input+u.CacheRead+u.CacheWrite)), semconv.GenAIUsageOutputTokens(int(u.Output)),
			semconv.GenAIUsageCacheReadInputTokens(int(u.CacheRead)), semconv.GenAIUsageCacheCreationInputTokens(int(u.CacheWrite)))
	}
	if msg := cmpOr(e.Error, errorText(e.Err)); msg != "" {
		a.span.SetStatus(codes.Error, msg)
		a.span.SetAttributes(semconv.ErrorTypeKey.String(errorType(e.Err, "agent_error")))
	}
	a.span.End(trace.WithTimestamp(at(e)))
}

// Close ends the spans still open — a run interrupted (Ctrl-C) or events
// dropped — with an error status saying so, at the current time. Call it
// after the bus is closed.
func (o *Observer) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	const why = "interrupted: the session closed before the span's end event"
	now := time.Now()
	for _, t := range o.tools {
		t.span.SetStatus(codes.Error, why)
		t.span.End(trace.WithTimestamp(now))
	}
	for k, c := range o.chats {
		c.span.SetStatus(codes.Error, why)
		c.span.End(trace.WithTimestamp(now))
		delete(o.chats, k)
	}
	for k, a := range o.agents {
		a.span.SetStatus(codes.Error, why)
		a.span.End(trace.WithTimestamp(now))
		delete(o.agents, k)
	}
	o.tools = nil
}
