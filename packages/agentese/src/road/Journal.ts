/**
 * The road's journal: one port that takes a call when it starts and its
 * ending when it ends, and fans them out to every record of a call: the
 * event (`tool.invoked`, then `tool.completed`, `tool.failed`,
 * `tool.trust_denied` or `tool.rate_limited`), the audit entries before and
 * after, the trace, and the metrics (`ugent_tool_calls` by path and outcome,
 * `ugent_tool_duration`). The audit and trace rows are the ones `Audited` and
 * `Traced` make (`@ugent/wrappers`' `Journal`), so the road and the wrappers
 * leave the same records.
 *
 * @since 0.2.0
 */
import { ToolError } from "@ugent/core"
import { type AuditStore, Journal, type TraceStore } from "@ugent/wrappers"
import { Cause, Duration, Effect, Metric, Option } from "effect"
import type * as Events from "../Events.ts"

/**
 * The calls served, by path and outcome (`success` or the failure's kind).
 *
 * @category metrics
 * @since 0.2.0
 */
export const calls = Metric.counter("ugent_tool_calls", { description: "Tool calls served by the road" })

/**
 * How long calls take, by path.
 *
 * @category metrics
 * @since 0.2.0
 */
export const duration = Metric.timer("ugent_tool_duration", { description: "The time a served call takes" })

const eventsSink = (events: Events.EventsShape): Journal.Sink => ({
  end: (call, ending, _durationMillis, at) => {
    const common = {
      id: call.id,
      path: call.path,
      observerId: call.observer?.id ?? "anonymous",
      at,
      ...(call.observer !== undefined ? { trust: call.observer.trust } : {})
    }
    if (ending._tag === "Success") {
      // The sentence and the estimate the audit records, so the stream tells what a call came to.
      const text = ending.text ?? Journal.resultText(ending.encoded)
      return events.publish({
        _tag: "tool.completed",
        ...common,
        durationMillis: at - call.startedAt,
        ...(ending.summary !== undefined ? { resultSummary: ending.summary } : {}),
        estimatedTokens: Journal.estimateTokens(text)
      })
    }
    const error = Cause.findErrorOption(ending.cause)
    // A defect is the server's own failure: it is not an outcome, and no event tells it.
    if (Option.isNone(error)) return Effect.void
    const json = ToolError.toJson(error.value)
    switch (ToolError.kindOf(error.value)) {
      case "denied":
        return events.publish({ _tag: "tool.trust_denied", ...common, reason: json.message })
      case "rate_limited":
        return events.publish({
          _tag: "tool.rate_limited",
          ...common,
          retryAfterMillis: ToolError.retryAfterMillis(json) ?? 0
        })
      default:
        return events.publish({
          _tag: "tool.failed",
          ...common,
          durationMillis: at - call.startedAt,
          error: { _tag: json._tag, message: json.message }
        })
    }
  }
})

const metricsSink = (): Journal.Sink => {
  // A metric with attributes is made once per path and outcome: making one costs more than updating it.
  const counters = new Map<string, Metric.Metric<number, unknown>>()
  const timers = new Map<string, Metric.Metric<Duration.Duration, unknown>>()
  return {
    end: (call, ending, durationMillis) => {
      let outcome = "success"
      if (ending._tag === "Failure") {
        const error = Cause.findErrorOption(ending.cause)
        outcome = Option.isSome(error) ? ToolError.kindOf(error.value) : "defect"
      }
      const key = `${call.path}\u0000${outcome}`
      let counter = counters.get(key)
      if (counter === undefined) {
        counter = Metric.withAttributes(calls, { path: call.path, outcome })
        counters.set(key, counter)
      }
      let timer = timers.get(call.path)
      if (timer === undefined) {
        timer = Metric.withAttributes(duration, { path: call.path })
        timers.set(call.path, timer)
      }
      return Effect.andThen(Metric.update(counter, 1), Metric.update(timer, Duration.millis(durationMillis)))
    }
  }
}

/**
 * The sinks of the road, in the order they write: the audit (its entry
 * before a call with side effects is stored before the call runs), then the
 * trace, the event and the metrics when it ends. The event `tool.invoked` is
 * published by {@link invoked} before anything else.
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (stores: {
  readonly audit: AuditStore.AuditStoreShape
  readonly trace: TraceStore.TraceStoreShape
  readonly events: Events.EventsShape
}): ReadonlyArray<Journal.Sink> => [
  Journal.auditSink(stores.audit),
  Journal.traceSink(stores.trace),
  eventsSink(stores.events),
  metricsSink()
]

/**
 * The event of a call that starts.
 *
 * @category events
 * @since 0.2.0
 */
export const invoked = (events: Events.EventsShape, call: Journal.Call): Effect.Effect<void> =>
  events.publish({
    _tag: "tool.invoked",
    id: call.id,
    path: call.path,
    observerId: call.observer?.id ?? "anonymous",
    at: call.startedAt,
    ...(call.observer !== undefined ? { trust: call.observer.trust } : {}),
    input: Journal.inputSummary(call.input),
    ...(call.alternatives.length > 0 ? { alternatives: [...call.alternatives] } : {})
  })
