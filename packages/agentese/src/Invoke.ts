/**
 * `invoke` is the single road every projection takes (the CLI, the HTTP API,
 * the MCP server, the `effect/ai` Toolkit, an agent loop, in-process
 * callers). A request becomes steps (each resolved and decided by the
 * recipe before any runs); each step is one call through the stages of
 * `internal/road/call.ts`:
 *
 * refusal decided before → level before decoding → the session's proof →
 * decode once → loop check → gate once (forbidden rules, approval) → rate
 * limits → circuit breaker → timeout → run → loop record → encode → result
 * budget → remember proofs,
 *
 * traced and audited as a whole, so a refusal at any stage leaves its record;
 * then an event, and an {@link Outcome}. The caller (`Observer`) and its
 * `Recipe` come from the server's configuration, never from the request, and
 * the settings (limits, timeout, loop window, budget) from the caller's
 * profile, its recipe and the host's overrides.
 *
 * @since 0.1.0
 */
import { Observer, ToolError } from "@ugent/core"
import {
  type AuditStore,
  type CircuitBreakerOptions,
  MemoryStore,
  Summarized,
  Traced,
  type TraceStore
} from "@ugent/wrappers"
import { Cause, Clock, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import type { CircuitBreaker as Breaker, RateLimiter } from "effect/persistence"
import * as Catalog from "./Catalog.ts"
import * as Events from "./Events.ts"
import { CurrentPlan, type Plan, PipelineMismatch, PolicyDenied, serve } from "./internal/road/call.ts"
import { plan } from "./internal/road/plan.ts"
import * as Loop from "./Loop.ts"
import * as Parse from "./Parse.ts"
import * as Profile from "./Profile.ts"
import * as Recipe from "./Recipe.ts"
import { Registry, type RegistryShape, UnknownPath } from "./Registry.ts"
import * as Modes from "./self/Modes.ts"
import * as Sessions from "./Sessions.ts"

export {
  /** @since 0.1.0 */
  PipelineMismatch,
  /** @since 0.1.0 */
  PolicyDenied
}

/**
 * The same call gave the same result too often with nothing written: see the
 * `Loop` module.
 *
 * @category errors
 * @since 0.1.0
 */
export const LoopDetected = Loop.LoopDetected

/**
 * One model response asked for more calls than the recipe allows.
 *
 * @category errors
 * @since 0.1.0
 */
export class TooManyCalls extends Schema.TaggedError<TooManyCalls>()("TooManyCalls", {
  path: Schema.String,
  max: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "rate_limited"
  override get message(): string {
    return `${this.path} was not called: one response may make at most ${this.max} calls. Make the most important calls first, then continue in the next response.`
  }
}

/**
 * Why a call did not succeed: the kind its error's class declares.
 *
 * @category models
 * @since 0.1.0
 */
export type FailureKind = ToolError.Kind

/**
 * A call that succeeded: its encoded result (or, over the budget, an
 * `OverBudget` summary).
 *
 * @category models
 * @since 0.2.0
 */
export interface SuccessOutcome {
  readonly ok: true
  readonly result: unknown
  readonly path: string
  readonly callId: string
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
  readonly kind: FailureKind
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
 * A request: a path (or a pipeline `a >> b`) or parsed steps, and the input.
 *
 * @category models
 * @since 0.1.0
 */
export interface Request {
  readonly path?: string | undefined
  readonly steps?: ReadonlyArray<Parse.Step> | undefined
  readonly input?: unknown
  /** The alternatives the caller considered, recorded in the trace. */
  readonly alternatives?: ReadonlyArray<string> | undefined
  /**
   * The caller's session, when the projection keeps state (an MCP connection,
   * an agent loop): proofs the caller was shown in it are supplied to its
   * writes. Defaults to the observer's own session, if any.
   */
  readonly session?: string | undefined
}

/**
 * A path as offered to a caller (see the `Catalog`).
 *
 * @category models
 * @since 0.1.0
 */
export type Offer = Catalog.Offer

/**
 * What a projection needs: the road and the caller it serves.
 *
 * @category models
 * @since 0.2.0
 */
export type Services = Invoker | Observer.Observer | Recipe.CurrentRecipe

/**
 * @category models
 * @since 0.1.0
 */
export interface InvokerShape {
  readonly invoke: (request: Request) => Effect.Effect<Outcome, never, Observer.Observer | Recipe.CurrentRecipe>
  /** Parses a model response and invokes every call in it, up to the recipe's `maxCallsPerResponse`. */
  readonly invokeText: (
    text: string,
    options?: { readonly session?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<Outcome>, never, Observer.Observer | Recipe.CurrentRecipe>
  /** The paths this caller may use, by the same check `invoke` enforces. */
  readonly list: Effect.Effect<ReadonlyArray<Offer>, never, Observer.Observer | Recipe.CurrentRecipe>
  /** A path's offer, if this caller may use it (a hidden path is unknown). */
  readonly describe: (path: string) => Effect.Effect<Offer, UnknownPath, Observer.Observer | Recipe.CurrentRecipe>
  /** The settings in force for this caller. */
  readonly settings: Effect.Effect<Profile.Settings, never, Recipe.CurrentRecipe>
  /** Forgets what a session remembers (its connection closed). */
  readonly endSession: (session: string) => Effect.Effect<void>
  readonly registry: RegistryShape
}

/**
 * @category services
 * @since 0.1.0
 */
export class Invoker extends Context.Service<Invoker, InvokerShape>()("ugent/agentese/Invoker") {}

/**
 * The options of the road: overrides of the profile and recipe settings, the
 * profile used when neither the host nor the recipe names one, the circuit
 * breaker of each path, and the workspace root (to spell paths canonically).
 *
 * @category models
 * @since 0.1.0
 */
export interface InvokerOptions extends Profile.Overrides {
  /** The profile when neither the overrides nor the recipe name one (default `local`). */
  readonly fallbackProfile?: Profile.Profile | undefined
  /** The circuit breaker of each path (defaults of the CircuitBreaker wrapper). */
  readonly breaker?: Omit<CircuitBreakerOptions, "key"> | undefined
  /** The workspace root: paths in inputs are compared relative to it. */
  readonly root?: string | undefined
}

/**
 * The services the road needs: the stores and limiters of its wrappers, the
 * loop detector and the sessions.
 *
 * @category models
 * @since 0.1.0
 */
export type RoadServices =
  | RateLimiter.RateLimiter
  | Breaker.CircuitBreakerStore
  | TraceStore.TraceStore
  | AuditStore.AuditStore
  | MemoryStore.MemoryStore
  | Loop.LoopDetector
  | Sessions.Sessions
  | Modes.Modes

type Served = ReturnType<typeof serve>

/** Working memory's tools as the road serves them, for the hints in its results. */
const memoryTools = { read: "self.memory.read", list: "self.memory.list" }

const failureOf = (path: string, callId: string, error: unknown, encoded?: unknown): FailureOutcome => ({
  ok: false,
  error: ToolError.toJson(error, encoded),
  kind: ToolError.kindOf(error),
  path,
  callId
})

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The input of a pipeline step: the request's input (first) or the previous output, with the step's own arguments. */
const stepInput = (i: number, args: Readonly<Record<string, unknown>>, first: unknown, previous: unknown): unknown => {
  const base = i === 0 ? first : previous
  if (Object.keys(args).length === 0) return i === 0 ? (base ?? {}) : base
  if (isObject(base) || base === undefined) return { ...(base as Record<string, unknown> | undefined), ...args }
  return base
}

/**
 * Builds the road over the registry: each path's served tool is made once;
 * the services it needs are taken from the layer's context.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options: InvokerOptions = {}
): Layer.Layer<Invoker, never, Registry | Events.Events | RoadServices> =>
  Layer.effect(
    Invoker,
    Effect.gen(function* () {
      const registry = yield* Registry
      const events = yield* Events.Events
      const services = yield* Effect.context<RoadServices>()
      const loops = Context.get(services, Loop.LoopDetector)
      const sessions = Context.get(services, Sessions.Sessions)
      const memory = Context.get(services, MemoryStore.MemoryStore)
      const modes = Context.get(services, Modes.Modes)
      const fallback = options.fallbackProfile ?? "local"

      const served = new Map<string, Served>()
      for (const entry of registry.entries) {
        const input = registry.describeEntry(entry).input as { readonly properties?: Record<string, unknown> }
        served.set(
          entry.path,
          serve(entry, {
            loops,
            sessions,
            memory,
            modes,
            root: options.root,
            breaker: options.breaker,
            takesProof: input.properties?.proof !== undefined
          })
        )
      }

      // Settings are worked out once per recipe (a recipe rarely changes while a server runs).
      const settingsCache = new WeakMap<Recipe.Recipe, Profile.Settings>()
      const settingsOf = (recipe: Recipe.Recipe): Profile.Settings => {
        let found = settingsCache.get(recipe)
        if (found === undefined) {
          found = Profile.settings(recipe, options, fallback)
          settingsCache.set(recipe, found)
        }
        return found
      }

      const publish = (outcome: Outcome, observerId: string, started: number) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const common = { id: outcome.callId, path: outcome.path, observerId, at }
          if (outcome.ok) return events.publish({ _tag: "tool.completed", ...common, durationMillis: at - started })
          switch (outcome.kind) {
            case "denied":
              return events.publish({ _tag: "tool.trust_denied", ...common, reason: outcome.error.message })
            case "rate_limited":
              return events.publish({
                _tag: "tool.rate_limited",
                ...common,
                retryAfterMillis: ToolError.retryAfterMillis(outcome.error) ?? 0
              })
            default:
              return events.publish({
                _tag: "tool.failed",
                ...common,
                durationMillis: at - started,
                error: { _tag: outcome.error._tag, message: outcome.error.message }
              })
          }
        })

      /** One call of one path: the served tool under its plan, its exit turned into an outcome. */
      const call = (
        path: string,
        callId: string,
        raw: unknown,
        callPlan: Plan,
        alternatives: ReadonlyArray<string> | undefined
      ): Effect.Effect<Outcome, never, Observer.Observer> =>
        Effect.gen(function* () {
          const observer = yield* Observer.Observer
          const started = yield* Clock.currentTimeMillis
          yield* events.publish({ _tag: "tool.invoked", id: callId, path, observerId: observer.id, at: started })
          const tool = served.get(path)!
          const exit = yield* tool
            .run(raw)
            .pipe(
              Effect.provideService(CurrentPlan, callPlan),
              Effect.provideService(Sessions.Current, callPlan.session),
              Traced.withCallId(callId),
              Effect.provideService(Summarized.MemoryTools, memoryTools),
              alternatives !== undefined ? Traced.withAlternatives(alternatives) : (e) => e,
              Effect.provideContext(Context.merge(services, Context.make(Observer.Observer, observer))),
              Effect.exit
            )
          let outcome: Outcome
          if (Exit.isSuccess(exit)) {
            outcome = { ok: true, result: exit.value, path, callId }
          } else {
            const error = Cause.findErrorOption(exit.cause)
            if (Option.isNone(error)) return yield* Effect.failCause(exit.cause as Cause.Cause<never>)
            outcome = failureOf(path, callId, error.value)
          }
          yield* publish(outcome, observer.id, started)
          return outcome
        })

      const invoke = (request: Request): Effect.Effect<Outcome, never, Observer.Observer | Recipe.CurrentRecipe> =>
        Effect.gen(function* () {
          const observer = yield* Observer.Observer
          const recipe = yield* Recipe.CurrentRecipe
          const callId = Traced.makeCallId()
          const planned = plan(registry, recipe, request)
          if (planned._tag === "Unplanned") return failureOf(planned.path, callId, planned.error)
          const settings = settingsOf(recipe)
          const session = request.session ?? observer.session
          // A denied step is refused before anything runs, and that refusal is recorded.
          const denied = planned.steps.find((s) => s.decision._tag === "Denied")
          const steps = denied === undefined ? planned.steps : [denied]
          let previous: unknown
          let outcome: Outcome | undefined
          for (const [i, step] of steps.entries()) {
            const from = denied === undefined && i > 0 ? steps[i - 1]!.entry.path : undefined
            const id = i === 0 ? callId : `${callId}.${i}`
            outcome = yield* call(
              step.entry.path,
              id,
              denied === undefined ? stepInput(i, step.args, request.input, previous) : (request.input ?? {}),
              { decision: step.decision, recipe, settings, session, from, refusal: undefined },
              request.alternatives
            )
            if (!outcome.ok) return i === 0 ? outcome : { ...outcome, callId }
            previous = outcome.result
          }
          return outcome === undefined ? outcome! : { ...outcome, callId }
        })

      const invokeText = (
        text: string,
        options?: { readonly session?: string | undefined }
      ): Effect.Effect<ReadonlyArray<Outcome>, never, Observer.Observer | Recipe.CurrentRecipe> =>
        Effect.gen(function* () {
          const recipe = yield* Recipe.CurrentRecipe
          const observer = yield* Observer.Observer
          const parsed = Parse.response(text)
          const outcomes: Array<Outcome> = parsed.errors.map((e) => failureOf("", Traced.makeCallId(), e))
          const max = recipe.maxCallsPerResponse ?? Number.POSITIVE_INFINITY
          let used = 0
          for (const invocation of parsed.invocations) {
            used += invocation.steps.length
            if (used > max) {
              const path = invocation.steps[0]?.path ?? ""
              const entry = registry.get(path)
              const refusal = new TooManyCalls({ path, max })
              // A known path's refusal is recorded like any other; an unknown one is only reported.
              outcomes.push(
                entry === undefined
                  ? failureOf(path, Traced.makeCallId(), refusal)
                  : yield* call(
                      path,
                      Traced.makeCallId(),
                      {},
                      {
                        decision: Recipe.decide(recipe, path, entry.tool.trust),
                        recipe,
                        settings: settingsOf(recipe),
                        session: options?.session ?? observer.session,
                        from: undefined,
                        refusal
                      },
                      undefined
                    )
              )
              continue
            }
            outcomes.push(yield* invoke({ steps: invocation.steps, input: {}, session: options?.session }))
          }
          return outcomes
        })

      return Invoker.of({
        registry,
        invoke,
        invokeText,
        list: Effect.gen(function* () {
          return Catalog.offers(registry, yield* Observer.Observer, yield* Recipe.CurrentRecipe)
        }),
        describe: (path) =>
          Effect.gen(function* () {
            const observer = yield* Observer.Observer
            const recipe = yield* Recipe.CurrentRecipe
            const entry = yield* registry.resolve(path)
            // A path the caller may not use is not described either: offer and permission never drift.
            if (!Catalog.permits(entry, observer, recipe)) return yield* new UnknownPath({ path, suggestions: [] })
            return Catalog.offerOf(registry, entry, recipe)
          }),
        settings: Effect.map(Recipe.CurrentRecipe, settingsOf),
        endSession: sessions.end
      })
    })
  )

/**
 * Invokes through the road in context.
 *
 * @category invoking
 * @since 0.1.0
 */
export const invoke = (request: Request): Effect.Effect<Outcome, never, Services> =>
  Effect.flatMap(Invoker, (road) => road.invoke(request))
