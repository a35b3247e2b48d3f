/**
 * `Events` is the stream of what happens on the `invoke` road:
 * `tool.invoked`, `tool.completed`, `tool.failed`, `tool.trust_denied`,
 * `tool.rate_limited`, `human.asked`, and of the agents that drive it:
 * `agent.step` after each step of a run, `agent.done` when it ends (see
 * `Agent`). They are published on a `PubSub`; each subscriber
 * gets a `Stream`. The hub keeps the newest 4,096 events per slow
 * subscriber (a sliding buffer), so a stalled subscriber cannot grow memory
 * or slow the callers.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, PubSub, Schema, type Scope, Stream } from "effect"

const common = {
  /** The call's id, shared by every event of one call. */
  id: Schema.String,
  path: Schema.String,
  observerId: Schema.String,
  /** Epoch milliseconds. */
  at: Schema.Number
}

/**
 * The schema of an event, its JSON form on the wire (server-sent events).
 *
 * @category schemas
 * @since 0.1.0
 */
/** What a call's events tell besides: the caller's trust level (absent from events made outside the road). */
const call = {
  ...common,
  trust: Schema.optionalKey(Schema.Literals([0, 1, 2, 3]))
}

export const EventSchema = Schema.Union([
  Schema.TaggedStruct("tool.invoked", {
    ...call,
    /** The input in short: its canonical JSON, cut to 200 characters (as the audit records it). */
    input: Schema.optionalKey(Schema.String),
    /** The other calls the caller considered with this one (ghost alternatives: an agent's other calls of its response). */
    alternatives: Schema.optionalKey(Schema.Array(Schema.String))
  }),
  Schema.TaggedStruct("tool.completed", {
    ...call,
    durationMillis: Schema.Number,
    /** The result in a sentence (`Read 120 lines from src/a.ts`), as the audit records it. */
    resultSummary: Schema.optionalKey(Schema.String),
    /** The result's size in estimated tokens (characters / 4), as the audit records it. */
    estimatedTokens: Schema.optionalKey(Schema.Number)
  }),
  Schema.TaggedStruct("tool.failed", {
    ...call,
    durationMillis: Schema.Number,
    error: Schema.Struct({ _tag: Schema.String, message: Schema.String })
  }),
  Schema.TaggedStruct("tool.trust_denied", {
    ...call,
    reason: Schema.String
  }),
  Schema.TaggedStruct("tool.rate_limited", { ...call, retryAfterMillis: Schema.Number }),
  /**
   * A step of an agent run ended: what the model said and asked for, and how
   * each call came out. `id` is the run's; each call's `callId` is the one
   * its `tool.*` events carry.
   */
  Schema.TaggedStruct("agent.step", {
    id: Schema.String,
    observerId: Schema.String,
    at: Schema.Number,
    /** The step's number, from 1. */
    step: Schema.Int,
    /** The model's text in this step (the first 2,000 characters). */
    text: Schema.String,
    calls: Schema.Array(
      Schema.Struct({
        /** The name the model used. */
        name: Schema.String,
        /** The path it named, when it names one. */
        path: Schema.optionalKey(Schema.String),
        callId: Schema.optionalKey(Schema.String),
        /** `ok`, `failed` (its kind says why), or `not_run` (a budget ran out first). */
        status: Schema.Literals(["ok", "failed", "not_run"]),
        kind: Schema.optionalKey(Schema.String)
      })
    ),
    inputTokens: Schema.Number,
    outputTokens: Schema.Number,
    durationMillis: Schema.Number
  }),
  /**
   * An agent run ended: answered (`complete`), stopped by a budget
   * (`incomplete`, `missing` names it) or failed (the model could not be
   * reached). `message` is the answer, what is missing, or the failure.
   */
  Schema.TaggedStruct("agent.done", {
    id: Schema.String,
    observerId: Schema.String,
    at: Schema.Number,
    status: Schema.Literals(["complete", "incomplete", "failed"]),
    missing: Schema.optionalKey(Schema.Literals(["steps", "tokens", "time"])),
    steps: Schema.Int,
    calls: Schema.Int,
    inputTokens: Schema.Number,
    outputTokens: Schema.Number,
    durationMillis: Schema.Number,
    message: Schema.String
  }),
  /** A question waits for a person (`GET /v1/pending`); `id` is the question's. */
  Schema.TaggedStruct("human.asked", {
    ...common,
    kind: Schema.Literals(["approval", "clarify"]),
    text: Schema.String
  })
])

/**
 * @category models
 * @since 0.1.0
 */
export type Event = typeof EventSchema.Type

/**
 * @category models
 * @since 0.1.0
 */
export interface EventsShape {
  readonly publish: (event: Event) => Effect.Effect<void>
  /** A stream of the events published from now on; it ends when its scope closes. */
  readonly subscribe: Effect.Effect<Stream.Stream<Event>, never, Scope.Scope>
}

/**
 * @category services
 * @since 0.1.0
 */
export class Events extends Context.Service<Events, EventsShape>()("ugent/agentese/Events") {}

/**
 * A hub on a sliding `PubSub`.
 *
 * **Example** (Subscribing)
 * ```ts
 * import { Events } from "@ugent/agentese"
 * import { Effect, Fiber, Stream } from "effect"
 * const program = Effect.gen(function* () {
 *   const events = yield* Events.Events
 *   const stream = yield* events.subscribe
 *   const fiber = yield* Effect.forkChild(Stream.runCollect(Stream.take(stream, 1)))
 *   yield* events.publish({ _tag: "tool.invoked", id: "1", path: "world.tools.file.read", observerId: "me", at: 0 })
 *   return yield* Fiber.join(fiber)
 * })
 * const [first] = Effect.runSync(Effect.scoped(program).pipe(Effect.provide(Events.layer)))
 * console.log(first?._tag)
 * // => tool.invoked
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer: Layer.Layer<Events> = Layer.effect(
  Events,
  Effect.gen(function* () {
    const hub = yield* Effect.acquireRelease(PubSub.sliding<Event>(4_096), PubSub.shutdown)
    return Events.of({
      publish: (event) => Effect.asVoid(PubSub.publish(hub, event)),
      subscribe: Effect.map(PubSub.subscribe(hub), (subscription) => Stream.fromSubscription(subscription))
    })
  })
)
