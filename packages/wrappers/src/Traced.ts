/**
 * `Traced` records every call of a tool: one trace per call into the
 * `TraceStore` (its id, the tool's path, the trace it ran under, its input,
 * its output or typed error, its duration, the alternatives the caller
 * considered, when it started, who called), and one Effect span per call, so
 * that `effect/observability` can export the calls to OpenTelemetry. A span
 * carries OpenTelemetry's GenAI attributes of a tool's execution
 * (`gen_ai.operation.name = "execute_tool"`, `gen_ai.tool.name` the path,
 * `gen_ai.tool.call.id` the trace id, which is the call's id when the server
 * gave one, see below; `gen_ai.tool.description`) beside
 * ugent's own (`ugent.tool.*`, `ugent.trace.*`, `ugent.retry.attempt`).
 *
 * The parent of a trace is the traced call in progress in the same fiber,
 * carried by the fiber-local reference {@link CurrentTrace}, not by a global:
 * so a traced pipeline whose steps are traced records one trace per step
 * under the pipeline's, and parallel branches (`Tool.all`, `Tool.fanout`)
 * each record under the call that forked them.
 *
 * **One id per call.** A server that gives a call an id of its own (to name
 * its events, its audit entries and its trace alike) sets it with
 * {@link withCallId}: the first traced call to start under it records the id
 * as its trace id; the traced calls it makes get ids of their own, under it
 * (it is their parent, and their root when it is the root). Any later
 * traced call under the same id, a sibling or a retry, gets an id of its own
 * too, so ids stay unique. `Audited` takes the same id as its `callId`.
 *
 * **Retries.** Each attempt of `Retry(Traced(f))` is a call of `Traced(f)`,
 * hence a trace of its own: the attempts are siblings under the caller's
 * trace, in start order, and each span carries `ugent.retry.attempt`.
 * `Traced(Retry(f))` records one trace for the whole retried call.
 *
 * @since 0.1.0
 */
import { Observer, Tool } from "@ugent/core"
import { Clock, Context, Effect, type Exit, Option } from "effect"
import { dual } from "effect/Function"
import { claim } from "./internal/callId.ts"
import { optionEncoder } from "./internal/jsonValue.ts"
import * as Journal from "./Journal.ts"
import { traceId } from "./internal/traceId.ts"
import { RetryAttempt } from "./Retry.ts"
import { TraceStore } from "./TraceStore.ts"

/**
 * The traced call in progress: its trace id and the id of the root of its
 * tree.
 *
 * @category models
 * @since 0.1.0
 */
export interface TraceContext {
  readonly id: string
  readonly rootId: string
}

/**
 * The traced call in progress in this fiber (inherited by the fibers it
 * forks), or none at the top. A traced call records it as its parent.
 *
 * @category references
 * @since 0.1.0
 */
export const CurrentTrace = Context.Reference<Option.Option<TraceContext>>("ugent/wrappers/Traced/CurrentTrace", {
  defaultValue: Option.none
})

/**
 * The alternatives the caller considered for the next traced calls (tool
 * paths or names), recorded with each trace made directly under it. A traced
 * call clears it for the calls it makes itself: those are its own choices.
 *
 * @category references
 * @since 0.1.0
 */
export const Alternatives = Context.Reference<ReadonlyArray<string>>("ugent/wrappers/Traced/Alternatives", {
  defaultValue: () => []
})

/**
 * Records the alternatives the caller considered for the traced calls of an
 * effect. Dual.
 *
 * @category references
 * @since 0.1.0
 */
export const withAlternatives: {
  (alternatives: ReadonlyArray<string>): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, alternatives: ReadonlyArray<string>): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, alternatives: ReadonlyArray<string>): Effect.Effect<A, E, R> =>
    Effect.provideService(self, Alternatives, alternatives)
)

/**
 * The id a server gave the call in progress, or none. The first traced call
 * to start under it takes it as its trace id, the first audited call as its
 * call id (see the module documentation); the calls they make, and any later
 * call, make ids of their own. Set it with {@link withCallId}.
 *
 * @category references
 * @since 0.2.0
 */
export const CallId = Context.Reference<Option.Option<string>>("ugent/wrappers/Traced/CallId", {
  defaultValue: Option.none
})

/**
 * Runs an effect as the call `id`: its first traced call records `id` as its
 * trace id, its first audited call as its call id (audit entries
 * `${id}/before` and `${id}/after`). Dual.
 *
 * **Example** (The server's call id is the trace id and the audit call id)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Audited, AuditStore, Stores, Traced, TraceStore } from "@ugent/wrappers"
 * import { Effect, Option, Schema } from "effect"
 * const words = Traced(Tool.fromFunction({ name: "text.words", input: Schema.String, output: Schema.Array(Schema.String), f: (s: string) => s.split(" ") }))
 * const count = Traced(Tool.fromFunction({ name: "list.count", input: Schema.Array(Schema.String), output: Schema.Number, f: (ws: ReadonlyArray<string>) => ws.length }))
 * const served = Traced(Audited(Tool.pipeline(words, count)), { path: "text.wordCount" })
 * const program = Effect.gen(function* () {
 *   yield* served.run("to be or not").pipe(Traced.withCallId("call-1"))
 *   const root = yield* (yield* TraceStore.TraceStore).get("call-1")
 *   const steps = yield* (yield* TraceStore.TraceStore).children("call-1")
 *   const audit = yield* (yield* AuditStore.AuditStore).list({ limit: 10 })
 *   return [Option.getOrThrow(root).path, steps.map((s) => s.rootId), audit.map((e) => e.id).sort()]
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Stores.layerMemory()))))
 * // => [ 'text.wordCount', [ 'call-1', 'call-1' ], [ 'call-1/after', 'call-1/before' ] ]
 * ```
 *
 * @category references
 * @since 0.2.0
 */
export const withCallId: {
  (id: string): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  <A, E, R>(self: Effect.Effect<A, E, R>, id: string): Effect.Effect<A, E, R>
} = dual(
  2,
  <A, E, R>(self: Effect.Effect<A, E, R>, id: string): Effect.Effect<A, E, R> =>
    Effect.provideService(self, CallId, Option.some(id))
)

/**
 * A fresh call id, of the kind `Traced` makes for its own traces: UUID v7
 * shaped (time, then a per-process counter, then random bits), so ids made
 * later sort after earlier ones.
 *
 * **Example** (Ids made later sort after)
 * ```ts
 * import { Traced } from "@ugent/wrappers"
 * const [a, b] = [Traced.makeCallId(), Traced.makeCallId()]
 * console.log(a! < b!, a!.length)
 * // => true 36
 * ```
 *
 * @category references
 * @since 0.2.0
 */
export const makeCallId: () => string = traceId

/**
 * The options of {@link Traced}.
 *
 * @category models
 * @since 0.1.0
 */
export interface TracedOptions<A = unknown> {
  /** The path recorded and the span's name (default: the tool's name), e.g. `"world.tools.file.read"`. */
  readonly path?: string | undefined
  /** The alternatives considered, fixed or computed from the input; when absent, {@link Alternatives} is read. */
  readonly alternatives?: ReadonlyArray<string> | ((input: A) => ReadonlyArray<string>) | undefined
}

// The wrapper itself; exported below with its references attached.
const traced: {
  <A = unknown>(
    options?: TracedOptions<A>
  ): <A2 extends A, B, E, R>(self: Tool.Tool<A2, B, E, R>) => Tool.Tool<A2, B, E, R | TraceStore>
  <A, B, E, R>(self: Tool.Tool<A, B, E, R>, options?: TracedOptions<A>): Tool.Tool<A, B, E, R | TraceStore>
} = dual(
  (args) => Tool.isTool(args[0]),
  <A, B, E, R>(self: Tool.Tool<A, B, E, R>, options?: TracedOptions<A>): Tool.Tool<A, B, E, R | TraceStore> => {
    const path = options?.path ?? self.name
    const encodeInput = optionEncoder(self.input)
    const encodeOutput = optionEncoder(self.output)
    const encodeFailure = optionEncoder(self.failure)
    const given = options?.alternatives
    return Tool.wrap(
      self,
      (run) => (a) =>
        // One read of the context instead of one effect per service: this runs on every call.
        Effect.contextWith((context: Context.Context<TraceStore>) => {
          const store = Context.get(context, TraceStore)
          const parent = Context.get(context, CurrentTrace)
          const alternatives =
            given === undefined ? Context.get(context, Alternatives) : typeof given === "function" ? given(a) : given
          const observer = Context.getOption(context, Observer.Observer)
          const attempt = Context.get(context, RetryAttempt)
          const clock = Context.get(context, Clock.Clock)
          const id = claim(Context.get(context, CallId), "traced") ?? traceId()
          const rootId = Option.isSome(parent) ? parent.value.rootId : id
          const startedAt = clock.currentTimeMillisUnsafe()
          const startNanos = clock.currentTimeNanosUnsafe()
          const call: Journal.Call = {
            id,
            parentId: Option.isSome(parent) ? parent.value.id : undefined,
            rootId,
            path,
            observer: Option.getOrUndefined(observer),
            input: Option.getOrElse(encodeInput(a), () => a),
            alternatives,
            sideEffects: false,
            startedAt
          }
          const attributes = Journal.spanAttributes(call, self, attempt)
          const sink = Journal.traceSink(store)
          const record = (exit: Exit.Exit<B, E>) =>
            Effect.suspend(() => {
              const endNanos = clock.currentTimeNanosUnsafe()
              return sink.end(
                call,
                Journal.endingOf(exit, encodeOutput, encodeFailure),
                Number(endNanos - startNanos) / 1e6,
                0
              )
            })

          const inner = run(a).pipe(
            Effect.provideService(CurrentTrace, Option.some({ id, rootId })),
            Effect.provideService(Alternatives, [])
          )
          // The span is found by its attributes; a captured stack trace would cost more than the call itself.
          // (Data-first: in 4.1 the data-last form ignores `captureStackTrace`.)
          return Effect.onExit(Effect.withSpan(inner, path, { attributes, captureStackTrace: false }), record)
        })
    )
  }
)

/**
 * Traces a tool (see the module documentation): one record per call into the
 * `TraceStore` in context, and one span named by the path. A store that
 * fails to record a trace is logged; the call itself is not affected. Dual.
 * At hand: `Traced.CurrentTrace`, `Traced.Alternatives`,
 * `Traced.withAlternatives`, `Traced.CallId`, `Traced.withCallId`,
 * `Traced.makeCallId`.
 *
 * **Example** (A traced pipeline of traced steps)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Traced, TraceStore } from "@ugent/wrappers"
 * import { Effect, Schema } from "effect"
 * const words = Traced(Tool.fromFunction({ name: "text.words", input: Schema.String, output: Schema.Array(Schema.String), f: (s: string) => s.split(" ") }))
 * const count = Traced(Tool.fromFunction({ name: "list.count", input: Schema.Array(Schema.String), output: Schema.Number, f: (ws: ReadonlyArray<string>) => ws.length }))
 * const pipeline = Traced(Tool.pipeline(words, count), { path: "text.wordCount" })
 * const program = Effect.gen(function* () {
 *   const n = yield* pipeline.run("to be or not").pipe(Traced.withAlternatives(["text.chars"]))
 *   const store = yield* TraceStore.TraceStore
 *   const [root] = yield* store.recent({ limit: 1, path: "text.wordCount" })
 *   const steps = yield* store.children(root!.id)
 *   return { n, root: [root!.path, root!.alternatives], steps: steps.map((s) => [s.path, s.output]) }
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(TraceStore.layerMemory()))))
 * // => { n: 4, root: [ 'text.wordCount', [ 'text.chars' ] ], steps: [ [ 'text.words', [ 'to', 'be', 'or', 'not' ] ], [ 'list.count', 4 ] ] }
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Traced: typeof traced & {
  readonly CurrentTrace: typeof CurrentTrace
  readonly Alternatives: typeof Alternatives
  readonly withAlternatives: typeof withAlternatives
  readonly CallId: typeof CallId
  readonly withCallId: typeof withCallId
  readonly makeCallId: typeof makeCallId
} = Object.assign(traced, { CurrentTrace, Alternatives, withAlternatives, CallId, withCallId, makeCallId })
