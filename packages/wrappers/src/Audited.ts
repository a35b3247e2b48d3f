/**
 * `Audited` keeps a log of who called what: before each call it records a
 * pending entry into the `AuditStore` (the observer, the tool's path, a
 * summary of the input), and after it a second entry with the outcome
 * (success or failure, the duration, the error's tag, message and kind, a
 * summary of the result and its estimated size in tokens, characters / 4).
 * The two entries share a call id: the server's (`Traced.withCallId`) when
 * it set one, so one id names the call's trace, audit entries and events.
 *
 * The entry before a call with side effects (it writes files, runs a shell,
 * reaches the network, or cannot be undone) is stored before the call runs
 * (`AuditStore.record`): if it cannot be written the call does not run (fail
 * closed, `StoreError`). A call without side effects leaves nothing to
 * account for if the process dies during it, so its entry before, and every
 * entry after, is written behind (`AuditStore.append`: within milliseconds,
 * before any read of the store); that still fails closed once the store's
 * writes are failing. The entry after the call cannot undo the call, so a
 * failure to write it is logged and the result returned; the pending entry
 * stays as the trace of a call whose end was not recorded.
 *
 * @since 0.1.0
 */
import { Observer, Tool } from "@ugent/core"
import { Clock, Context, Effect, Exit, Option } from "effect"
import { dual } from "effect/Function"
import { AuditStore } from "./AuditStore.ts"
import { claim } from "./internal/callId.ts"
import { optionEncoder } from "./internal/jsonValue.ts"
import * as Journal from "./Journal.ts"
import { traceId } from "./internal/traceId.ts"
import { StoreError } from "./StoreError.ts"
import { CallId } from "./Traced.ts"

/**
 * The options of {@link Audited}.
 *
 * @category models
 * @since 0.1.0
 */
export interface AuditedOptions<A = unknown, B = unknown> {
  /** The path recorded (default: the tool's name). */
  readonly path?: string | undefined
  /** The input as recorded (default: its canonical JSON, cut to 200 characters). Leave secrets out here. */
  readonly summarizeInput?: ((input: A) => string) | undefined
  /** The result as recorded (default: its text, cut to 200 characters). */
  readonly summarizeResult?: ((output: B) => string) | undefined
  /** The observer id recorded when no `Observer` is in context (default `"anonymous"`). */
  readonly anonymous?: string | undefined
  /** When the entry before the call cannot be written: refuse the call (`"fail"`, default) or only log. */
  readonly onStoreError?: "fail" | "log" | undefined
}

/**
 * The estimated size in tokens of a text: characters / 4, rounded up.
 *
 * @category utils
 * @since 0.1.0
 */
export const estimateTokens: (text: string) => number = Journal.estimateTokens

// The wrapper itself; exported below with `estimateTokens` attached.
const audited: {
  <A = unknown, B = unknown>(
    options?: AuditedOptions<A, B>
  ): <A2 extends A, B2 extends B, E, R>(
    self: Tool.Tool<A2, B2, E, R>
  ) => Tool.Tool<A2, B2, E | StoreError, R | AuditStore>
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: AuditedOptions<A, B>
  ): Tool.Tool<A, B, E | StoreError, R | AuditStore>
} = dual(
  (args) => Tool.isTool(args[0]),
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: AuditedOptions<A, B>
  ): Tool.Tool<A, B, E | StoreError, R | AuditStore> => {
    const path = options?.path ?? self.name
    const encodeInput = optionEncoder(self.input)
    const encodeOutput = optionEncoder(self.output)
    const given = options?.summarizeInput
    const summarizeResult = options?.summarizeResult
    const { writesFs, callsShell, callsNetwork, irreversible } = self.effects
    const sideEffects = writesFs || callsShell || callsNetwork || irreversible
    const noFailure = () => Option.none()

    return Tool.wrap(
      self,
      (run) => (a) =>
        // One read of the context instead of one effect per service: this runs on every call.
        Effect.contextWith((context: Context.Context<AuditStore>) => {
          const clock = Context.get(context, Clock.Clock)
          const call: Journal.Call = {
            id: claim(Context.get(context, CallId), "audited") ?? traceId(),
            parentId: undefined,
            rootId: "",
            path,
            observer: Option.getOrUndefined(Context.getOption(context, Observer.Observer)),
            input: Option.getOrElse(encodeInput(a), () => a),
            alternatives: [],
            sideEffects,
            startedAt: clock.currentTimeMillisUnsafe()
          }
          const sink = Journal.auditSink(Context.get(context, AuditStore), {
            onStoreError: options?.onStoreError,
            anonymous: options?.anonymous,
            summarizeInput: given === undefined ? undefined : () => given(a)
          })
          let startNanos = 0n
          const after = (exit: Exit.Exit<B, E>) =>
            Effect.suspend(() => {
              const durationMillis = Number(clock.currentTimeNanosUnsafe() - startNanos) / 1e6
              const ending = Journal.endingOf(exit, encodeOutput, noFailure)
              const told =
                ending._tag === "Success" && Exit.isSuccess(exit) && summarizeResult !== undefined
                  ? { ...ending, summary: summarizeResult(exit.value) }
                  : ending
              return sink.end(call, told, durationMillis, clock.currentTimeMillisUnsafe())
            })
          return Effect.andThen(
            sink.begin!(call),
            Effect.suspend(() => {
              startNanos = clock.currentTimeNanosUnsafe()
              return Effect.onExit(run(a), after)
            })
          )
        }),
      { failure: Tool.failureWith(self, StoreError) }
    )
  }
)

/**
 * Audits a tool (see the module documentation): a pending entry before each
 * call, an entry with the outcome after it, into the `AuditStore` in
 * context. Dual. At hand: `Audited.estimateTokens`.
 *
 * **Example** (Two entries per call)
 * ```ts
 * import { Observer, Tool } from "@ugent/core"
 * import { Audited, AuditStore } from "@ugent/wrappers"
 * import { Effect, Layer, Schema } from "effect"
 * const upper = Tool.fromFunction({ name: "text.upper", input: Schema.String, output: Schema.String, f: (s: string) => s.toUpperCase() })
 * const program = Effect.gen(function* () {
 *   yield* Audited(upper).run("hello")
 *   const entries = yield* (yield* AuditStore.AuditStore).list({ limit: 10 })
 *   const before = entries.find((e) => e.phase === "before")!
 *   const after = entries.find((e) => e.phase === "after")!
 *   return [before.status, before.observerId, before.inputSummary, after.status, after.resultSummary, after.estimatedTokens]
 * })
 * const env = Layer.merge(AuditStore.layerMemory(), Observer.layer({ id: "agent-1", trust: 0 }))
 * console.log(Effect.runSync(program.pipe(Effect.provide(env))))
 * // => [ 'pending', 'agent-1', 'hello', 'success', 'HELLO', 2 ]
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Audited: typeof audited & { readonly estimateTokens: typeof estimateTokens } = Object.assign(audited, {
  estimateTokens
})
