/**
 * The `Journal` is where a call's records are made: one {@link Call} when it
 * starts and one {@link Ending} when it ends, turned into the rows each store
 * keeps (a trace, the audit entries before and after) by the functions here
 * and nowhere else. `Traced` and `Audited` are thin wrappers over one sink
 * each; the AGENTESE road fans the same call out to every sink at once, so a
 * call served by the road and a tool wrapped by hand leave the same records.
 *
 * @since 0.2.0
 */
import { Boundary, type Observer, ToolError } from "@ugent/core"
import { Cause, Effect, Exit, Option, type Schema } from "effect"
import type { AuditEntry, AuditError, AuditStoreShape } from "./AuditStore.ts"
import { canonicalJson } from "./internal/canonical.ts"
import { encodedJson, jsonOf } from "./internal/jsonValue.ts"
import type { StoreError } from "./StoreError.ts"
import type { TraceRecord, TraceStoreShape } from "./TraceStore.ts"

/**
 * One call as it starts: who made it, of what, with which input, under which
 * trace.
 *
 * @category models
 * @since 0.2.0
 */
export interface Call {
  readonly id: string
  /** The traced call this one runs under, if any. */
  readonly parentId: string | undefined
  readonly rootId: string
  readonly path: string
  readonly observer: Observer.ObserverShape | undefined
  /** The input as the caller sent it (encoded), or as its schema encodes it. */
  readonly input: unknown
  readonly alternatives: ReadonlyArray<string>
  /** The client's own id of the call (an MCP client's tool-use id), to join its records with ours. */
  readonly clientCallId?: string | undefined
  /** The server that serves the call, in a room of several. */
  readonly instance?: string | undefined
  /** Whether the call writes, runs a shell, reaches the network or cannot be undone. */
  readonly sideEffects: boolean
  /** Epoch milliseconds. */
  readonly startedAt: number
}

/**
 * How a call ended: its encoded result and the text a model reads of it, or
 * the cause of its failure (with the failure's encoded form, when its schema
 * gives one).
 *
 * @category models
 * @since 0.2.0
 */
export type Ending =
  | {
      readonly _tag: "Success"
      readonly encoded: unknown
      /** The text a model reads of it (default: its JSON). */
      readonly text?: string | undefined
      /** The result as the audit records it (default: its text, cut to 200 characters). */
      readonly summary?: string | undefined
    }
  | { readonly _tag: "Failure"; readonly cause: Cause.Cause<unknown>; readonly encodedError?: unknown }

/**
 * The attributes of a call's span: OpenTelemetry's GenAI conventions for a
 * tool's execution, then ugent's own.
 *
 * @category records
 * @since 0.2.0
 */
export const spanAttributes = (
  call: Call,
  tool: { readonly name: string; readonly version: string; readonly description: string },
  attempt: number
): Record<string, unknown> => {
  const attributes: Record<string, unknown> = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": call.path,
    "gen_ai.tool.call.id": call.id,
    "ugent.tool.name": tool.name,
    "ugent.tool.path": call.path,
    "ugent.tool.version": tool.version,
    "ugent.trace.id": call.id,
    "ugent.trace.root_id": call.rootId,
    "ugent.retry.attempt": attempt
  }
  if (tool.description !== "") attributes["gen_ai.tool.description"] = tool.description
  if (call.parentId !== undefined) attributes["ugent.trace.parent_id"] = call.parentId
  if (call.alternatives.length > 0) attributes["ugent.alternatives"] = call.alternatives.join(",")
  if (call.observer !== undefined) attributes["ugent.observer.id"] = call.observer.id
  if (call.clientCallId !== undefined) attributes["ugent.client.call_id"] = call.clientCallId
  return attributes
}

/**
 * A wrapped tool's exit as the journal records it: its result and failure
 * encoded by the tool's own schemas where they can (the encoders answer
 * `Option.none()` where they cannot, and the value is then copied as JSON).
 *
 * @category records
 * @since 0.2.0
 */
export const endingOf = <B, E>(
  exit: Exit.Exit<B, E>,
  encodeOutput: (u: unknown) => Option.Option<unknown>,
  encodeFailure: (u: unknown) => Option.Option<unknown>
): Ending => {
  if (Exit.isSuccess(exit)) return { _tag: "Success", encoded: encodedJson(encodeOutput, exit.value) }
  const error = Cause.findErrorOption(exit.cause)
  return {
    _tag: "Failure",
    cause: exit.cause,
    encodedError: Option.isSome(error) ? Option.getOrUndefined(encodeFailure(error.value)) : undefined
  }
}

/**
 * A sink of the journal: what it writes when a call starts (a failure there
 * refuses the call) and when it ends (a failure there is only logged).
 *
 * @category models
 * @since 0.2.0
 */
export interface Sink {
  readonly begin?: ((call: Call) => Effect.Effect<void, StoreError>) | undefined
  readonly end: (call: Call, ending: Ending, durationMillis: number, at: number) => Effect.Effect<void>
}

const cut = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`)

/**
 * The text a model would read of an encoded result: itself if a string, else
 * its JSON.
 *
 * @category records
 * @since 0.2.0
 */
export const resultText = (encoded: unknown): string => {
  if (typeof encoded === "string") return encoded
  try {
    return Boundary.jsonText(encoded)
  } catch {
    // A bigint or a cycle: a plain copy prints.
    return JSON.stringify(jsonOf(encoded))
  }
}

/**
 * An input as recorded in the audit: its canonical JSON (keys sorted), cut to
 * 200 characters, so one input always reads the same.
 *
 * @category records
 * @since 0.2.0
 */
export const inputSummary = (encoded: unknown): string =>
  cut(typeof encoded === "string" ? encoded : (canonicalJson(encoded) ?? JSON.stringify(jsonOf(encoded))), 200)

/**
 * The estimated size in tokens of a text: characters / 4, rounded up.
 *
 * @category records
 * @since 0.2.0
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * The trace row of a call.
 *
 * @category records
 * @since 0.2.0
 */
export const traceRecord = (call: Call, ending: Ending, durationMillis: number): TraceRecord => {
  const observer = call.observer
  return {
    id: call.id,
    ...(call.parentId !== undefined ? { parentId: call.parentId } : {}),
    rootId: call.rootId,
    path: call.path,
    input: jsonOf(call.input),
    ...traceOutcome(ending),
    startedAt: call.startedAt,
    durationMillis,
    alternatives: [...call.alternatives],
    ...(observer !== undefined ? { observerId: observer.id } : {}),
    ...(observer?.session !== undefined ? { sessionId: observer.session } : {}),
    ...(call.clientCallId !== undefined ? { clientCallId: call.clientCallId } : {}),
    ...(call.instance !== undefined ? { instance: call.instance } : {})
  }
}

const traceOutcome = (
  ending: Ending
):
  | { readonly status: "success"; readonly output: Schema.Json }
  | { readonly status: "failure"; readonly error: Schema.Json }
  | { readonly status: "interrupted" }
  | { readonly status: "defect"; readonly error: Schema.Json } => {
  if (ending._tag === "Success") return { status: "success", output: jsonOf(ending.encoded) }
  const error = Cause.findErrorOption(ending.cause)
  if (Option.isSome(error)) {
    return { status: "failure", error: jsonOf(ToolError.toJson(error.value, ending.encodedError)) }
  }
  if (Cause.hasInterruptsOnly(ending.cause)) return { status: "interrupted" }
  return { status: "defect", error: { _tag: "Defect", message: Cause.pretty(ending.cause) } }
}

/**
 * The audit entry written before a call (status `pending`).
 *
 * @category records
 * @since 0.2.0
 */
export const auditBefore = (
  call: Call,
  summary: string = inputSummary(call.input),
  anonymous = "anonymous"
): AuditEntry => ({
  callId: call.id,
  observerId: call.observer?.id ?? anonymous,
  path: call.path,
  inputSummary: summary,
  id: `${call.id}/before`,
  phase: "before",
  at: call.startedAt,
  status: "pending",
  ...(call.clientCallId !== undefined ? { clientCallId: call.clientCallId } : {}),
  ...(call.instance !== undefined ? { instance: call.instance } : {})
})

/**
 * The audit entry written after a call: its outcome, duration, and a
 * summary of its result (the first 200 characters of its text, unless the
 * ending gives one) with the result's estimated size in tokens.
 *
 * @category records
 * @since 0.2.0
 */
export const auditAfter = (
  call: Call,
  ending: Ending,
  at: number,
  durationMillis: number,
  options: { readonly summary?: string | undefined; readonly anonymous?: string | undefined } = {}
): AuditEntry => ({
  callId: call.id,
  observerId: call.observer?.id ?? options.anonymous ?? "anonymous",
  path: call.path,
  inputSummary: options.summary ?? inputSummary(call.input),
  id: `${call.id}/after`,
  phase: "after",
  at,
  durationMillis,
  ...(call.clientCallId !== undefined ? { clientCallId: call.clientCallId } : {}),
  ...(call.instance !== undefined ? { instance: call.instance } : {}),
  ...(ending._tag === "Success"
    ? {
        status: "success" as const,
        ...successSummary(ending.text ?? resultText(ending.encoded), ending.summary)
      }
    : { status: "failure" as const, error: auditError(ending.cause) })
})

const successSummary = (text: string, given: string | undefined) => ({
  resultSummary: given ?? cut(text, 200),
  estimatedTokens: estimateTokens(text)
})

// A typed error carries its kind on its class; a defect is the tool's own failure; an interrupted call has no kind.
const auditError = (cause: Cause.Cause<unknown>): AuditError => {
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
 * The trace sink: one row per call when it ends. A row that cannot be
 * written is logged; the call is not affected.
 *
 * @category sinks
 * @since 0.2.0
 */
export const traceSink = (store: TraceStoreShape): Sink => ({
  end: (call, ending, durationMillis) =>
    store
      .append([traceRecord(call, ending, durationMillis)])
      .pipe(Effect.catch((error) => Effect.logWarning(`Traced: could not record a trace of ${call.path}`, error)))
})

/**
 * The audit sink: a pending entry when a call starts, its outcome when it
 * ends. The entry before a call with side effects is stored before the call
 * runs (`record`); any other is written behind (`append`). With
 * `onStoreError: "fail"` (the default) an entry before that cannot be
 * written refuses the call; with `"log"` it is only logged.
 *
 * @category sinks
 * @since 0.2.0
 */
export const auditSink = (
  store: AuditStoreShape,
  options: {
    readonly onStoreError?: "fail" | "log" | undefined
    /** The input as recorded (default {@link inputSummary} of the call's input). */
    readonly summarizeInput?: ((call: Call) => string) | undefined
    readonly anonymous?: string | undefined
  } = {}
): Sink => {
  const failClosed = (options.onStoreError ?? "fail") === "fail"
  const summary = (call: Call) =>
    options.summarizeInput === undefined ? inputSummary(call.input) : options.summarizeInput(call)
  return {
    begin: (call) => {
      const pending = auditBefore(call, summary(call), options.anonymous)
      const write = call.sideEffects ? store.record(pending) : store.append(pending)
      return failClosed
        ? write
        : Effect.catch(write, (e) => Effect.logWarning(`Audited: could not record the call of ${call.path}`, e))
    },
    end: (call, ending, durationMillis, at) =>
      store
        .append(auditAfter(call, ending, at, durationMillis, { summary: summary(call), anonymous: options.anonymous }))
        .pipe(Effect.catch((e) => Effect.logWarning(`Audited: could not record the end of a call of ${call.path}`, e)))
  }
}

/**
 * Runs every sink's `begin` in order (the first failure refuses the call).
 *
 * @category sinks
 * @since 0.2.0
 */
export const begin = (sinks: ReadonlyArray<Sink>, call: Call): Effect.Effect<void, StoreError> => {
  let effect: Effect.Effect<void, StoreError> = Effect.void
  for (const sink of sinks) if (sink.begin !== undefined) effect = Effect.andThen(effect, sink.begin(call))
  return effect
}

/**
 * Runs every sink's `end` (none fails).
 *
 * @category sinks
 * @since 0.2.0
 */
export const end = (
  sinks: ReadonlyArray<Sink>,
  call: Call,
  ending: Ending,
  durationMillis: number,
  at: number
): Effect.Effect<void> =>
  sinks.length === 1
    ? sinks[0]!.end(call, ending, durationMillis, at)
    : Effect.forEach(sinks, (sink) => sink.end(call, ending, durationMillis, at), { discard: true })
