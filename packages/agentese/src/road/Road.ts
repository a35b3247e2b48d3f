/**
 * The road: one call of one route by one caller, as one `Effect`.
 *
 * journal begins (the event, the audit entry before) → admission before
 * decoding (policy, level, plan mode) → the session's proof → decode once →
 * admission of the input (its level, the forbidden rules, whether a person
 * approves) → loop check → approval, only where needed → rate limits and
 * circuit breaker, only where the route has them → run at the admitted
 * level, within the time limit, in the context made ahead for the caller →
 * loop record and progress → encode once into `{ value, text }` (and, for
 * a caller whose client hands results to a model, the text made for it,
 * see `Render`) → result budget (the caller's client's, unless the recipe or
 * host sets one) → remember proofs → journal ends (audit, trace, event,
 * metrics).
 *
 * Every refusal is a typed failure recorded like any other outcome; a defect
 * (a bug) is recorded and passed on.
 *
 * @since 0.2.0
 */
import { Boundary, type Family, ReadProof, ToolError, Trust } from "@ugent/core"
import { Checkpoints } from "@ugent/tools"
import {
  CircuitBreaker,
  type CircuitBreakerOptions,
  Journal,
  MemoryStore,
  type OnStoreErrorPolicy,
  RateLimited,
  TimedOut,
  type TraceContext,
  Traced
} from "@ugent/wrappers"
import { Cause, Clock, Context, Effect, Exit, Option, Schema } from "effect"
import type { CircuitBreaker as Breaker, RateLimiter } from "effect/persistence"
import * as Budget from "../Budget.ts"
import type * as Events from "../Events.ts"
import * as Loop from "../Loop.ts"
import * as Progress from "../Progress.ts"
import * as Render from "../Render.ts"
import type * as Modes from "../self/Modes.ts"
import type * as Sessions from "../Sessions.ts"
import * as Admission from "./Admission.ts"
import * as Approval from "./Approval.ts"
import type { Caller } from "./Caller.ts"
import * as RoadJournal from "./Journal.ts"
import { isLimited, type Route } from "./Route.ts"

/**
 * The output of one pipeline step does not fit the input of the next.
 *
 * @category errors
 * @since 0.1.0
 */
export class PipelineMismatch extends Schema.TaggedError<PipelineMismatch>()("PipelineMismatch", {
  from: Schema.String,
  to: Schema.String,
  issues: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The output of ${this.from} does not fit the input of ${this.to}: ${this.issues.replace(/\s*\n\s*/g, " ")}. Describe both paths to compare their schemas, or add arguments to the second step.`
  }
}

/**
 * A call that succeeded: its encoded result (or, over the budget, an
 * `OverBudget` summary), and that result's JSON text, printed once.
 *
 * @category models
 * @since 0.2.0
 */
export interface SuccessOutcome {
  readonly ok: true
  readonly result: unknown
  readonly path: string
  readonly callId: string
  /** The result's JSON text, as the road printed it (not enumerable; absent on outcomes made by hand). */
  readonly text?: string | undefined
  /** The text made for the caller's model, when its call named an audience (not enumerable). */
  readonly modelText?: string | undefined
}

/**
 * A call that did not succeed: the failure's JSON and its kind.
 *
 * @category models
 * @since 0.2.0
 */
export interface FailureOutcome {
  readonly ok: false
  readonly error: ToolError.FailureJson
  readonly kind: ToolError.Kind
  readonly path: string
  readonly callId: string
}

/**
 * What a call came to, as plain JSON plus its kind.
 *
 * @category models
 * @since 0.1.0
 */
export type Outcome = SuccessOutcome | FailureOutcome

/**
 * The outcome of a success, carrying the text the road printed of its
 * result. The text is not enumerable: a projection that prints the outcome
 * itself (as JSON) does not print the result twice, and one that sends the
 * result's text takes it as it is.
 *
 * @category constructors
 * @since 0.2.0
 */
export const success = (
  result: unknown,
  text: string,
  path: string,
  callId: string,
  modelText?: string | undefined
): SuccessOutcome =>
  Object.defineProperties(
    { ok: true as const, result, path, callId },
    {
      text: { value: text, enumerable: false },
      ...(modelText === undefined ? {} : { modelText: { value: modelText, enumerable: false } })
    }
  )

/**
 * The outcome of a failure.
 *
 * @category constructors
 * @since 0.2.0
 */
export const failure = (path: string, callId: string, error: unknown): FailureOutcome => ({
  ok: false,
  error: ToolError.toJson(error),
  kind: ToolError.kindOf(error),
  path,
  callId
})

/**
 * What the road runs on: its stores and detectors, made when the server
 * starts.
 *
 * @category models
 * @since 0.2.0
 */
export interface Services {
  readonly sinks: ReadonlyArray<Journal.Sink>
  readonly events: Events.EventsShape
  readonly loops: Loop.LoopDetectorShape
  readonly sessions: Sessions.SessionsShape
  readonly memory: MemoryStore.MemoryStoreShape
  readonly modes: Modes.ModesShape
  readonly limiter: RateLimiter.RateLimiter
  readonly breakers: Breaker.CircuitBreakerStore["Service"]
  /** The breaker's settings (defaults of the CircuitBreaker wrapper). */
  readonly breaker: Omit<CircuitBreakerOptions, "key"> | undefined
  /** The workspace root: paths in inputs are compared relative to it. */
  readonly root: string | undefined
  /** What the limiter and breaker do when their store (Redis) does not answer. */
  readonly onStoreError: OnStoreErrorPolicy
  /** This server's name in a room, recorded with each call. */
  readonly instance?: string | undefined
  /**
   * Where approval requests are kept, and the workspace whose files they
   * bind: with them an approval is stored, answerable any time and bound to
   * the bytes it was shown (see `Approval`); without, it is asked once and
   * lost with the call.
   */
  readonly approvals?: Approval.Services | undefined
}

/**
 * How one call is made: its id, and for a pipeline step after the first the
 * path whose output is its input; a refusal decided before it (too many
 * calls in one response), recorded like any other; the alternatives its
 * caller considered.
 *
 * @category models
 * @since 0.2.0
 */
export interface CallOptions {
  readonly id: string
  readonly from?: string | undefined
  /**
   * For a pipeline step after the first, the keys its caller wrote (the
   * step's own arguments): only these are refused when the tool does not
   * take them; the previous output's other keys are dropped.
   */
  readonly own?: ReadonlyArray<string> | undefined
  readonly refusal?: unknown
  readonly alternatives?: ReadonlyArray<string> | undefined
  /** Who reads the result through the caller's client: its result is then also made into text for a model, within that client's budget. */
  readonly audience?: Render.Audience | undefined
  /** The client's own id of this call (its tool-use id), recorded with the call. */
  readonly clientCallId?: string | undefined
}

/**
 * @category models
 * @since 0.2.0
 */
export interface Road {
  readonly call: (route: Route, caller: Caller, raw: unknown, options: CallOptions) => Effect.Effect<Outcome>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** What the stages come to: the encoded result, its JSON text, and the text made for a model, if any. */
interface Stage {
  readonly value: unknown
  readonly text: string
  readonly modelText?: string | undefined
  /** The result in a sentence, for the audit and the events (see `Budget.sentence`). */
  readonly summary?: string | undefined
}

/** What is made once per route for the road: the stages that do not depend on a call. */
interface Prepared {
  readonly guard: ReturnType<typeof CircuitBreaker.stage> | undefined
  readonly checks: ReturnType<typeof RateLimited.checks> | undefined
  readonly decode: (input: unknown) => Exit.Exit<unknown, unknown>
  /** The keys the tool's input takes, when it is a closed object. */
  readonly keys: ReadonlyArray<string> | undefined
}

/**
 * The road over its services.
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (services: Services): Road => {
  const { sinks, loops, sessions, modes } = services
  const prepared = new WeakMap<Route, Prepared>()
  const prepare = (route: Route): Prepared => {
    let found = prepared.get(route)
    if (found === undefined) {
      found = {
        guard: route.breaker
          ? CircuitBreaker.stage(route.entry.tool.name, { ...services.breaker, key: route.path })
          : undefined,
        checks: isLimited(route) ? RateLimited.checks(route.limits) : undefined,
        // A proof is verified with the server's key, which only the effectful decoder reads from the context.
        decode: route.takesProof
          ? () => Exit.fail(undefined)
          : Schema.decodeUnknownExit(route.entry.tool.input as Schema.Codec<unknown, unknown, never, never>, {
              errors: "all",
              onExcessProperty: "error"
            }),
        keys: Boundary.inputKeys(route.entry.tool)
      }
      prepared.set(route, found)
    }
    return found
  }

  /** In a session, a write without a token gets the newest proof the caller was shown of that file. */
  const supplyProof = (route: Route, caller: Caller, raw: unknown): Effect.Effect<unknown> => {
    if (!route.takesProof || caller.session === undefined || !isRecord(raw) || raw.proof !== undefined) {
      return Effect.succeed(raw)
    }
    if (typeof raw.path !== "string") return Effect.succeed(raw)
    return Effect.map(sessions.proofOf(caller.session, Loop.canonicalPath(raw.path, services.root)), (token) =>
      token === undefined ? raw : { ...raw, proof: token }
    )
  }

  /**
   * Decodes once (the synchronous decoder first), refusing keys the tool does not take. For a later pipeline
   * step the previous output's other keys are dropped (only the step's own arguments are the caller's), and
   * a misfit is a PipelineMismatch.
   */
  const decode = (route: Route, ready: Prepared, options: CallOptions, input: unknown) => {
    const { from } = options
    if (from === undefined) {
      const exit = ready.decode(input)
      if (Exit.isSuccess(exit)) return Effect.succeed(exit.value)
      return Boundary.decodeInput(route.entry.tool, input)
    }
    const own = new Set(options.own ?? [])
    const keys = ready.keys === undefined ? undefined : new Set(ready.keys)
    const kept =
      keys !== undefined && isRecord(input)
        ? Object.fromEntries(Object.entries(input).filter(([k]) => keys.has(k) || own.has(k)))
        : input
    return Effect.mapError(
      Boundary.decodeInput(route.entry.tool, kept, { onExcessProperty: keys === undefined ? "ignore" : "error" }),
      (e) => (e._tag === "UnknownArguments" ? e : new PipelineMismatch({ from, to: route.path, issues: e.issues }))
    )
  }

  /** Proofs in a result are remembered for the session, under the path asked for and the file's own. */
  const rememberProofs = (session: string, asked: unknown, output: unknown): Effect.Effect<void> => {
    const proofs: Array<ReadProof.ReadProof> = []
    const walk = (v: unknown, depth: number): void => {
      if (depth > 4) return
      if (ReadProof.isProofLike(v)) proofs.push(v)
      else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1)
      else if (isRecord(v)) for (const x of Object.values(v)) walk(x, depth + 1)
    }
    walk(output, 0)
    if (proofs.length === 0) return Effect.void
    const askedPath = isRecord(asked) && typeof asked.path === "string" ? asked.path : undefined
    return Effect.forEach(
      proofs,
      (proof) => {
        const paths = new Set([Loop.canonicalPath(proof.path, services.root)])
        if (askedPath !== undefined && proofs.length === 1) paths.add(Loop.canonicalPath(askedPath, services.root))
        return Effect.forEach(paths, (p) => sessions.remember(session, p, proof), { discard: true })
      },
      { discard: true }
    )
  }

  /**
   * The diff a call would make, for the person asked to approve it: the
   * tool's own dry run (nothing written), at the level the call would run
   * at, within two seconds; nothing when it fails or has no diff.
   */
  const dryRun = (route: Route, caller: Caller, level: Trust.TrustLevel, decoded: unknown) =>
    !isRecord(decoded)
      ? Effect.succeed(undefined)
      : (route.entry.tool.run({ ...decoded, dryRun: true }) as Effect.Effect<unknown, unknown>).pipe(
          Effect.provideContext(caller.runContext(level)),
          Effect.timeoutOption(2000),
          Effect.map((out) => {
            const value = Option.getOrUndefined(out)
            return isRecord(value) && typeof value.diff === "string" && value.diff !== "" ? value.diff : undefined
          }),
          Effect.catchCause(() => Effect.succeed(undefined))
        )

  /** The stages between the journal's two ends: the encoded result and its text, or a typed failure. */
  const stages = (
    route: Route,
    caller: Caller,
    raw: unknown,
    options: CallOptions,
    trace: TraceContext,
    onStoreError: OnStoreErrorPolicy,
    progress: Progress.Reporter
  ): Effect.Effect<Stage, unknown> =>
    Effect.gen(function* () {
      if (options.refusal !== undefined) return yield* Effect.fail(options.refusal)
      const { observer } = caller
      const mode = route.refusedInPlanMode ? yield* modes.get(caller.modeKey) : undefined
      const before = Admission.beforeDecoding(route, observer, mode)
      if (before !== undefined) return yield* Effect.fail(before)
      const ready = prepare(route)
      const input = yield* supplyProof(route, caller, raw)
      const decoded = yield* decode(route, ready, options, input)
      const admitted = Admission.afterDecoding(route, observer, caller.recipe, caller.forbidden, decoded)
      if (!Admission.isAdmitted(admitted)) return yield* Effect.fail(admitted)
      const loopKey = Admission.loopKey(route, observer, decoded, services.root)
      if (loopKey !== undefined) yield* loops.check(loopKey, route.path, route.loop!)
      let approved: ReadonlyMap<string, string | null> | undefined
      if (admitted.approval !== undefined) {
        const preview = route.previews ? yield* dryRun(route, caller, admitted.runAt, decoded) : undefined
        const request = preview === undefined ? admitted.approval : { ...admitted.approval, preview }
        if (services.approvals === undefined) yield* Trust.requestApproval(request)
        else approved = yield* Approval.admit(services.approvals, route, caller, request, decoded)
      }
      if (ready.checks !== undefined) {
        yield* RateLimited.admit(
          services.limiter,
          ready.checks,
          { observer: observer.id, tool: JSON.stringify([route.path, observer.id]) },
          { tool: route.entry.tool.name, onStoreError }
        )
      }
      // A tool that sets its own, longer limit for this input (a shell command's timeoutSeconds) is not cut first.
      const own = route.entry.timeout?.(decoded)
      const timeoutMillis = own !== undefined && own > route.timeoutMillis ? own : route.timeoutMillis
      let run = Effect.timeoutOrElse(route.entry.tool.run(decoded) as Effect.Effect<unknown, unknown>, {
        duration: timeoutMillis,
        orElse: () => Effect.fail(new TimedOut({ tool: route.path, timeoutMillis, retryable: true }))
      })
      if (ready.guard !== undefined) run = ready.guard(services.breakers, run, onStoreError)
      const traced = Context.add(caller.runContext(admitted.runAt), Traced.CurrentTrace, Option.some(trace))
      // The call's id and path go with the checkpoint of each file it changes.
      const called = route.progress
        ? Context.add(traced, Checkpoints.CurrentCall, {
            id: trace.id,
            tool: route.path,
            ...(caller.session === undefined ? {} : { session: caller.session })
          })
        : traced
      // An approved call's writes check, under each file's lock, that it holds the approved bytes.
      const context = approved === undefined ? called : Approval.provide(called, approved)
      // The caller's progress reporter, when one listens, reaches the tool (a mounted server's notifications).
      const output = yield* Effect.provideContext(
        run,
        progress === Progress.none ? context : Context.add(context, Progress.Current, progress)
      )
      if (route.progress) yield* loops.progress
      if (loopKey !== undefined) yield* loops.record(loopKey, Loop.fingerprint(output), route.loop!)
      const encoded = yield* Boundary.encodeOutput(route.entry.tool, output)
      const text = JSON.stringify(encoded) ?? "null"
      const audience = options.audience
      const present = presentation(route, output, decoded)
      if (audience !== undefined) {
        return withSummary(
          yield* forModel(route, caller, audience, input, output, encoded, text, present),
          route,
          encoded,
          present
        )
      }
      if (Budget.estimateTokens(text) > route.budgetTokens) {
        const over = yield* Budget.apply({
          path: route.path,
          encoded,
          text,
          budgetTokens: route.budgetTokens,
          memory: services.memory,
          present,
          owner: observer.id,
          source: MemoryStore.sourceOf(output)
        })
        if (over !== undefined) return { value: over, text: JSON.stringify(over), summary: over.summary }
      }
      // A proof is printed as its token, so a result whose text has none carries none: no walk through a listing.
      if (caller.session !== undefined && text.includes(ReadProof.tokenPrefix)) {
        yield* rememberProofs(caller.session, input, output)
      }
      return { value: encoded, text, summary: Budget.sentence(route.path, encoded, present) }
    })

  /**
   * The result made into text for the audience's model, within its client's
   * budget (the recipe's or host's, when they set one): a page of working
   * memory is cut to fit, any other result over the budget is kept in
   * working memory (its text, without proofs) and told in a summary.
   */
  const forModel = (
    route: Route,
    caller: Caller,
    audience: Render.Audience,
    input: unknown,
    output: unknown,
    encoded: unknown,
    text: string,
    present: Family.Presentation | undefined
  ): Effect.Effect<Stage, unknown> =>
    Effect.gen(function* () {
      const limit = route.budgetFixed ? Budget.tokens(route.budgetTokens) : audience.limit
      // A tool that renders itself has no sentence above its text.
      const modelText = Render.result(
        route.path,
        encoded,
        audience,
        Render.rendersItself(route.path) ? undefined : present
      )
      if (!Budget.fits(limit, modelText)) {
        if (route.path === Budget.memoryRead) {
          const page = yield* Budget.fitPage(
            encoded,
            limit,
            (p) => Render.result(route.path, p, audience),
            (line) => locateLine(encoded, line)
          )
          return { value: page, text: JSON.stringify(page), modelText: Render.result(route.path, page, audience) }
        }
        // What is kept is the text the model would have read, with no proof in it: a proof is earned by being shown.
        const kept = audience.remembersProofs
          ? modelText
          : Render.result(route.path, encoded, { ...audience, remembersProofs: true }, present)
        const over = yield* Budget.apply({
          path: route.path,
          encoded,
          text: modelText,
          limit,
          kept,
          memory: services.memory,
          present,
          owner: caller.observer.id,
          source: MemoryStore.sourceOf(output)
        })
        if (over !== undefined) {
          return { value: over, text: JSON.stringify(over), modelText: Render.overBudget(over, audience) }
        }
      }
      if (caller.session !== undefined && text.includes(ReadProof.tokenPrefix)) {
        yield* rememberProofs(caller.session, input, output)
      }
      return { value: encoded, text, modelText }
    })

  /** Where a line of a kept text starts, and the text's size: for a page whose first line alone is larger than a page. */
  const locateLine = (page: unknown, line: number) =>
    Effect.map(services.memory.get(String((page as { readonly id?: unknown }).id)), (entry) => {
      let offset = 0
      for (let n = 1; n < line && offset !== -1; n++) {
        const at = entry.content.indexOf("\n", offset)
        offset = at === -1 ? -1 : at + 1
      }
      return { offset: Math.max(0, offset), size: entry.content.length }
    })

  const call = (route: Route, caller: Caller, raw: unknown, options: CallOptions): Effect.Effect<Outcome> =>
    Effect.contextWith((context: Context.Context<never>) => {
      const clock = Context.get(context, Clock.Clock)
      const parent = Context.get(context, Traced.CurrentTrace)
      const startNanos = clock.currentTimeNanosUnsafe()
      const record: Journal.Call = {
        id: options.id,
        parentId: Option.isSome(parent) ? parent.value.id : undefined,
        rootId: Option.isSome(parent) ? parent.value.rootId : options.id,
        path: route.path,
        observer: caller.observer,
        input: raw,
        alternatives: options.alternatives ?? Context.get(context, Traced.Alternatives),
        sideEffects: route.sideEffects,
        startedAt: clock.currentTimeMillisUnsafe(),
        ...(options.clientCallId !== undefined ? { clientCallId: options.clientCallId } : {}),
        ...(services.instance !== undefined ? { instance: services.instance } : {})
      }
      const trace = { id: record.id, rootId: record.rootId }
      const body = Effect.flatMap(Effect.exit(Journal.begin(sinks, record)), (begun) =>
        Exit.isFailure(begun)
          ? Effect.succeed(begun as Exit.Exit<never, unknown>)
          : Effect.exit(
              stages(
                route,
                caller,
                raw,
                options,
                trace,
                services.onStoreError,
                Context.get(context, Progress.Current)
              ).pipe(Effect.provideService(Traced.Alternatives, []))
            )
      )
      const attributes = Journal.spanAttributes(record, route.entry.tool, 0)
      return Effect.andThen(
        RoadJournal.invoked(services.events, record),
        Effect.flatMap(
          Effect.withSpan(body, route.path, { attributes, captureStackTrace: false }),
          (exit): Effect.Effect<Outcome> => {
            const ending: Journal.Ending = Exit.isSuccess(exit)
              ? {
                  _tag: "Success",
                  encoded: exit.value.value,
                  text: exit.value.modelText ?? exit.value.text,
                  summary: exit.value.summary
                }
              : {
                  _tag: "Failure",
                  cause: exit.cause,
                  encodedError: Option.getOrUndefined(Cause.findErrorOption(exit.cause))
                }
            const end = Journal.end(
              sinks,
              record,
              ending,
              Number(clock.currentTimeNanosUnsafe() - startNanos) / 1e6,
              clock.currentTimeMillisUnsafe()
            )
            if (Exit.isSuccess(exit))
              return Effect.as(
                end,
                success(exit.value.value, exit.value.text, route.path, options.id, exit.value.modelText)
              )
            const error = Cause.findErrorOption(exit.cause)
            // A defect is a bug: recorded, then passed on, never turned into a result.
            if (Option.isNone(error)) return Effect.andThen(end, Effect.failCause(exit.cause as Cause.Cause<never>))
            return Effect.as(end, failure(route.path, options.id, error.value))
          }
        )
      )
    })

  return { call }
}

/** A stage with its sentence: an over-budget result's own, else the result's. */
const withSummary = (stage: Stage, route: Route, encoded: unknown, present: Family.Presentation | undefined): Stage => {
  const over = stage.value as { readonly overBudget?: unknown; readonly summary?: unknown } | undefined
  const summary =
    over?.overBudget === true && typeof over.summary === "string"
      ? over.summary
      : Budget.sentence(route.path, encoded, present)
  return { ...stage, summary }
}

/** The family's own sentence for a result, if it has one. */
const presentation = (route: Route, output: unknown, input: unknown): Family.Presentation | undefined => {
  if (route.entry.present === undefined) return undefined
  try {
    return route.entry.present(output, input)
  } catch {
    // A presenter that throws only loses its sentence: the generic summary is used.
    return undefined
  }
}
