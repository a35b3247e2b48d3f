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
import { Boundary, Observer, Tool, ToolError } from "@ugent/core"
import { Cause, Clock, Context, Effect, Exit, Option } from "effect"
import { dual } from "effect/Function"
import { type AuditEntry, type AuditError, AuditStore } from "./AuditStore.ts"
import { canonicalJson } from "./internal/canonical.ts"
import { jsonOf, optionEncoder } from "./internal/jsonValue.ts"
import { claim } from "./internal/callId.ts"
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

const cut = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`)

/** An input as recorded: its canonical JSON (keys sorted), so one input always reads the same. */
const inputText = (encoded: unknown): string =>
  typeof encoded === "string" ? encoded : (canonicalJson(encoded) ?? JSON.stringify(jsonOf(encoded)))

/**
 * The text a model would read of a result: itself if a string, else its JSON
 * (the engine's own, in the value's key order: only its first 200 characters
 * and its length are kept, and a result can be large, so sorting its keys
 * would cost much and buy nothing).
 */
const resultText = (encoded: unknown): string => {
  if (typeof encoded === "string") return encoded
  try {
    return Boundary.jsonText(encoded)
  } catch {
    // A bigint or a cycle: a plain copy prints.
    return JSON.stringify(jsonOf(encoded))
  }
}

/**
 * The estimated size in tokens of a text: characters / 4, rounded up.
 *
 * @category utils
 * @since 0.1.0
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

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
    const anonymous = options?.anonymous ?? "anonymous"
    const failClosed = (options?.onStoreError ?? "fail") === "fail"
    const encodeInput = optionEncoder(self.input)
    const encodeOutput = optionEncoder(self.output)
    const summarizeInput =
      options?.summarizeInput ??
      ((a: A) => {
        const encoded = encodeInput(a)
        return cut(inputText(Option.isSome(encoded) ? encoded.value : a), 200)
      })
    const summarizeResult = options?.summarizeResult
    const { writesFs, callsShell, callsNetwork, irreversible } = self.effects
    const sideEffects = writesFs || callsShell || callsNetwork || irreversible

    return Tool.wrap(
      self,
      (run) => (a) =>
        // One read of the context instead of one effect per service: this runs on every call.
        Effect.contextWith((context: Context.Context<AuditStore>) => {
          const store = Context.get(context, AuditStore)
          const observer = Context.getOption(context, Observer.Observer)
          const clock = Context.get(context, Clock.Clock)
          const callId = claim(Context.get(context, CallId), "audited") ?? traceId()
          const common = {
            callId,
            observerId: Option.isSome(observer) ? observer.value.id : anonymous,
            path,
            inputSummary: summarizeInput(a)
          }
          const pending: AuditEntry = {
            ...common,
            id: `${callId}/before`,
            phase: "before",
            at: clock.currentTimeMillisUnsafe(),
            status: "pending"
          }
          const before = sideEffects ? store.record(pending) : store.append(pending)
          let startNanos = 0n
          const after = (exit: Exit.Exit<B, E>) =>
            Effect.suspend(() => {
              const durationMillis = Number(clock.currentTimeNanosUnsafe() - startNanos) / 1e6
              let outcome:
                | { readonly status: "success"; readonly resultSummary: string; readonly estimatedTokens: number }
                | { readonly status: "failure"; readonly error: AuditError }
              if (Exit.isSuccess(exit)) {
                const encoded = encodeOutput(exit.value)
                const text = resultText(Option.isSome(encoded) ? encoded.value : jsonOf(exit.value))
                outcome = {
                  status: "success",
                  resultSummary: summarizeResult === undefined ? cut(text, 200) : summarizeResult(exit.value),
                  estimatedTokens: estimateTokens(text)
                }
              } else {
                outcome = { status: "failure", error: errorOf(exit.cause) }
              }
              const entry = {
                ...common,
                id: `${callId}/after`,
                phase: "after" as const,
                at: clock.currentTimeMillisUnsafe(),
                durationMillis,
                ...outcome
              }
              return store
                .append(entry)
                .pipe(
                  Effect.catch((e) => Effect.logWarning(`Audited: could not record the end of a call of ${path}`, e))
                )
            })
          const call = Effect.suspend(() => {
            startNanos = clock.currentTimeNanosUnsafe()
            return Effect.onExit(run(a), after)
          })
          return Effect.andThen(
            failClosed
              ? before
              : Effect.catch(before, (e) => Effect.logWarning(`Audited: could not record the call of ${path}`, e)),
            call
          )
        }),
      { failure: Tool.failureWith(self, StoreError) }
    )
  }
)

// A typed error carries its kind on its class; a defect is the tool's own failure; an interrupted call has no kind.
const errorOf = <E>(cause: Cause.Cause<E>): AuditError => {
  const error = Cause.findErrorOption(cause)
  if (Option.isSome(error)) {
    return {
      tag: ToolError.toJson(error.value)._tag,
      message: ToolError.messageOf(error.value),
      kind: ToolError.kindOf(error.value)
    }
  }
  if (Cause.hasInterruptsOnly(cause))
    return { tag: "Interrupted", message: "The call was interrupted before it finished." }
  return { tag: "Defect", message: cut(Cause.pretty(cause), 500), kind: "failed" }
}

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
