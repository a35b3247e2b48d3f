/**
 * `invoke` is the single road every projection takes (the CLI, the HTTP API,
 * the MCP server, the `effect/ai` Toolkit, in-process callers):
 *
 * resolve → policy (the recipe) → loop detector → trust gate (with approval)
 * → rate limit → audit → traced run (timeout, circuit breaker) → audit →
 * event → result.
 *
 * Projections differ only in how they decode a request and print an
 * {@link Outcome}. The caller (`Observer`) and its `Recipe` come from the
 * server's configuration, never from the request.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { Boundary, Observer, Tool, ToolError, Trust } from "@ugent/core"
import {
  Audited,
  type AuditStore,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type Limit,
  type Limits,
  RateLimited,
  Timeout,
  Traced,
  type TraceStore
} from "@ugent/wrappers"
import { Cause, Clock, Context, Duration, Effect, Exit, Layer, Option, Schema } from "effect"
import type { CircuitBreaker as Breaker, RateLimiter } from "effect/persistence"
import * as Events from "./Events.ts"
import type { Entry } from "./Node.ts"
import * as Parse from "./Parse.ts"
import * as Recipe from "./Recipe.ts"
import { type Description, Registry, UnknownPath } from "./Registry.ts"

/**
 * The recipe does not let this caller use the path.
 *
 * @category errors
 * @since 0.1.0
 */
export class PolicyDenied extends Schema.TaggedError<PolicyDenied>()("PolicyDenied", {
  path: Schema.String,
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "denied"
  override get message(): string {
    return `${this.path} is not available to you: ${this.reason}. Use only the paths you are offered (list them).`
  }
}

/**
 * The same call was made too often in a short time: a loop.
 *
 * @category errors
 * @since 0.1.0
 */
export class LoopDetected extends Schema.TaggedError<LoopDetected>()("LoopDetected", {
  path: Schema.String,
  count: Schema.Int,
  windowMillis: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "rate_limited"
  override get message(): string {
    return `The same call to ${this.path} with the same input was made ${this.count} times within ${this.windowMillis / 1000} s; it is refused to stop a loop. Use the result you already have, or change the input.`
  }
}

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
 * Why a call did not succeed, for projections to map to exit codes and HTTP
 * statuses.
 *
 * @category models
 * @since 0.1.0
 */
export type FailureKind = "not_found" | "invalid_input" | "denied" | "rate_limited" | "failed" | "parse"

/**
 * What a call came to, as plain JSON plus its kind.
 *
 * @category models
 * @since 0.1.0
 */
export type Outcome =
  | { readonly ok: true; readonly result: unknown; readonly path: string; readonly callId: string }
  | {
      readonly ok: false
      readonly error: ToolError.FailureJson
      readonly kind: FailureKind
      readonly path: string
      readonly callId: string
    }

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
}

/**
 * A path as offered to a caller: its description and the level it needs
 * under the caller's recipe.
 *
 * @category models
 * @since 0.1.0
 */
export interface Offer extends Description {
  readonly requiredTrust: Trust.TrustLevel
  readonly requiresApproval: boolean
}

/**
 * @category models
 * @since 0.1.0
 */
export interface InvokerShape {
  readonly invoke: (request: Request) => Effect.Effect<Outcome, never, Observer.Observer | Recipe.CurrentRecipe>
  /** Parses a model response and invokes every call in it, up to the recipe's `maxCallsPerResponse`. */
  readonly invokeText: (
    text: string
  ) => Effect.Effect<ReadonlyArray<Outcome>, never, Observer.Observer | Recipe.CurrentRecipe>
  /** The paths this caller may use, by the same check `invoke` enforces. */
  readonly list: Effect.Effect<ReadonlyArray<Offer>, never, Observer.Observer | Recipe.CurrentRecipe>
  /** A path's description, if this caller may use it (a hidden path is unknown). */
  readonly describe: (path: string) => Effect.Effect<Offer, UnknownPath, Observer.Observer | Recipe.CurrentRecipe>
  readonly registry: Registry["Service"]
}

/**
 * @category services
 * @since 0.1.0
 */
export class Invoker extends Context.Service<Invoker, InvokerShape>()("ugent/agentese/Invoker") {}

/**
 * The options of the road.
 *
 * @category models
 * @since 0.1.0
 */
export interface InvokerOptions {
  /** Each call's time limit (default 120 s). */
  readonly timeout?: Duration.Input | undefined
  /** The circuit breaker of each path (defaults of the CircuitBreaker wrapper). */
  readonly breaker?: Omit<CircuitBreakerOptions, "key"> | undefined
  /** The loop detector: the `count`-th identical call within `window` is refused (default 3 in 1 minute). */
  readonly loop?: { readonly count: number; readonly window: Duration.Input } | undefined
  /** The global rate limits, over every caller and path (default 100/min and 2,000/h). */
  readonly globalLimits?: ReadonlyArray<Limit> | undefined
}

type Prepared = Tool.Tool<unknown, unknown, unknown, Observer.Observer>

/**
 * The services the road's wrappers need: a rate limiter, a circuit-breaker store,
 * a trace store and an audit store.
 *
 * @category models
 * @since 0.1.0
 */
export type RoadServices =
  | RateLimiter.RateLimiter
  | Breaker.CircuitBreakerStore
  | TraceStore.TraceStore
  | AuditStore.AuditStore

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Canonical JSON: sorted keys, so equal inputs give equal loop keys. */
const canonical = (u: unknown): string =>
  JSON.stringify(u, (_, v) =>
    isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v
  ) ?? "undefined"

const kindOf = (tag: string): FailureKind => {
  switch (tag) {
    case "InvalidInput":
    case "PipelineMismatch":
      return "invalid_input"
    case "TrustDenied":
    case "ApprovalDenied":
    case "Forbidden":
    case "PolicyDenied":
      return "denied"
    case "RateLimited":
    case "LoopDetected":
    case "TooManyCalls":
      return "rate_limited"
    case "UnknownPath":
      return "not_found"
    case "ParseError":
      return "parse"
    default:
      return "failed"
  }
}

const limitsOf = (recipe: Recipe.Recipe, path: string, global: ReadonlyArray<Limit>): Limits => {
  const { caller, tool } = Recipe.limitsFor(recipe, path)
  const toLimits = (l: { readonly perMinute?: number; readonly perHour?: number } | undefined) => [
    ...(l?.perMinute !== undefined ? [{ limit: l.perMinute, window: "1 minute" as const }] : []),
    ...(l?.perHour !== undefined ? [{ limit: l.perHour, window: "1 hour" as const }] : [])
  ]
  return {
    global,
    observer: caller === undefined ? RateLimited.defaults.observer : toLimits(caller),
    tool: toLimits(tool)
  }
}

/**
 * Builds the road over the registry: each path's tool is wrapped once
 * (gate, rate limit, audit, trace, breaker, timeout); the services those
 * wrappers need are taken from the layer's context.
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
      const timeout = Duration.fromInputUnsafe(options.timeout ?? "120 seconds")
      const loopCount = options.loop?.count ?? 3
      const loopWindow = Duration.toMillis(Duration.fromInputUnsafe(options.loop?.window ?? "1 minute"))
      const globalLimits = options.globalLimits ?? RateLimited.defaults.global

      const prepared = new Map<string, Prepared>()
      for (const entry of registry.entries) {
        const wrapped = Trust.gate(
          entry.tool.pipe(
            Timeout({ duration: timeout }),
            CircuitBreaker({ ...options.breaker, key: entry.path }),
            Traced({ path: entry.path }),
            Audited({ path: entry.path }),
            RateLimited({ key: entry.path })
          )
        )
        prepared.set(
          entry.path,
          Tool.wrap(
            wrapped,
            (run) => (a) =>
              Effect.updateContext(
                run(a),
                // The road's services, under the call's own context (which wins).
                (outer: Context.Context<Observer.Observer>) =>
                  Context.merge(services, outer) as Context.Context<Observer.Observer | RoadServices>
              )
          )
        )
      }

      const recent = new Map<string, Array<number>>()
      // Expired keys are swept when the map doubles past its last sweep: amortized O(1) per call.
      let sweepAt = 10_000
      const checkLoop = (key: string, path: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const times = (recent.get(key) ?? []).filter((t) => now - t < loopWindow)
          times.push(now)
          recent.set(key, times)
          if (recent.size > sweepAt) {
            for (const [k, ts] of recent) if (ts.every((t) => now - t >= loopWindow)) recent.delete(k)
            sweepAt = Math.max(10_000, recent.size * 2)
          }
          return times.length >= loopCount
            ? Effect.fail(new LoopDetected({ path, count: times.length, windowMillis: loopWindow }))
            : Effect.void
        })

      const fail = (path: string, callId: string, error: unknown, encoded?: unknown): Outcome => {
        const json = ToolError.toJson(error, encoded)
        return { ok: false, error: json, kind: kindOf(json._tag), path, callId }
      }

      const publishFailure = (
        callId: string,
        path: string,
        observerId: string,
        json: ToolError.FailureJson,
        started: number
      ) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => {
          const common = { id: callId, path, observerId, at }
          switch (kindOf(json._tag)) {
            case "denied":
              return events.publish({ _tag: "tool.trust_denied", ...common, reason: json.message })
            case "rate_limited":
              return events.publish({
                _tag: "tool.rate_limited",
                ...common,
                retryAfterMillis: typeof json.retryAfterMillis === "number" ? json.retryAfterMillis : 0
              })
            default:
              return events.publish({
                _tag: "tool.failed",
                ...common,
                durationMillis: at - started,
                error: { _tag: json._tag, message: json.message }
              })
          }
        })

      /** Runs one resolved, allowed step; every failure becomes an Outcome. */
      const runStep = (
        entry: Entry,
        decision: Extract<Recipe.Decision, { _tag: "Allowed" }>,
        input: unknown,
        callId: string,
        alternatives: ReadonlyArray<string> | undefined
      ) =>
        Effect.gen(function* () {
          const observer = yield* Observer.Observer
          const recipe = yield* Recipe.CurrentRecipe
          const tool = prepared.get(entry.path)!
          const started = yield* Clock.currentTimeMillis
          yield* events.publish({
            _tag: "tool.invoked",
            id: callId,
            path: entry.path,
            observerId: observer.id,
            at: started
          })
          const exit = yield* Effect.exit(
            Effect.gen(function* () {
              // The level is checked before the input is decoded, so a caller learns nothing from a path it may
              // not use; the recipe may have raised the level above the tool's own (the gate checks that again).
              if (observer.trust < decision.requiredTrust) {
                return yield* new ToolError.TrustDenied({
                  tool: entry.path,
                  required: decision.requiredTrust,
                  actual: observer.trust,
                  ...(decision.requiredTrust > entry.tool.trust
                    ? { reason: "the recipe raises this path's level" }
                    : {})
                })
              }
              const raisedToConfirm = decision.requiredTrust >= 2 && entry.tool.trust < 2 && observer.trust === 2
              if (decision.approval || raisedToConfirm) {
                yield* Trust.requestApproval({
                  tool: entry.path,
                  observer,
                  input,
                  reason: "confirmation",
                  detail: decision.approval
                    ? "the recipe asks for approval of every call"
                    : "the recipe raises this path to L2"
                })
              }
              const decoded = yield* Boundary.decodeInput(tool, input)
              return yield* tool
                .run(decoded)
                .pipe(
                  Effect.provideService(RateLimited.Limits, limitsOf(recipe, entry.path, globalLimits)),
                  alternatives !== undefined ? Traced.withAlternatives(alternatives) : (e) => e
                )
            })
          )
          if (Exit.isSuccess(exit)) {
            const result = yield* Boundary.encodeOutput(tool, exit.value)
            const at = yield* Clock.currentTimeMillis
            yield* events.publish({
              _tag: "tool.completed",
              id: callId,
              path: entry.path,
              observerId: observer.id,
              at,
              durationMillis: at - started
            })
            return { ok: true, result, path: entry.path, callId } as Outcome
          }
          const error = Cause.findErrorOption(exit.cause)
          if (Option.isNone(error)) return yield* Effect.failCause(exit.cause as Cause.Cause<never>)
          const json = yield* Boundary.encodeFailure(tool, error.value)
          yield* publishFailure(callId, entry.path, observer.id, json, started)
          return { ok: false, error: json, kind: kindOf(json._tag), path: entry.path, callId } as Outcome
        })

      const invoke = (request: Request): Effect.Effect<Outcome, never, Observer.Observer | Recipe.CurrentRecipe> =>
        Effect.gen(function* () {
          const observer = yield* Observer.Observer
          const recipe = yield* Recipe.CurrentRecipe
          const callId = randomUUID()
          let steps: ReadonlyArray<Parse.Step>
          if (request.steps !== undefined) {
            steps = request.steps
          } else {
            const parsed = Parse.pipeline(request.path ?? "")
            if (parsed._tag === "Left") return fail(request.path ?? "", callId, parsed.left)
            steps = parsed.right.steps
          }
          const first = steps[0]?.path ?? ""
          // Resolve and check every step before any runs.
          const resolved: Array<readonly [Entry, Extract<Recipe.Decision, { _tag: "Allowed" }>]> = []
          for (const step of steps) {
            const entry = yield* Effect.result(registry.resolve(step.path))
            if (entry._tag === "Failure") return fail(step.path, callId, entry.failure)
            const decision = Recipe.decide(recipe, step.path, entry.success.tool.trust)
            if (decision._tag === "Denied") {
              const denied = new PolicyDenied({ path: step.path, reason: decision.reason })
              const outcome = fail(step.path, callId, denied)
              yield* publishFailure(
                callId,
                step.path,
                observer.id,
                (outcome as { error: ToolError.FailureJson }).error,
                0
              )
              return outcome
            }
            resolved.push([entry.success, decision])
          }
          const loop = yield* Effect.result(
            checkLoop(`${observer.id}\u0000${canonical(steps)}\u0000${canonical(request.input)}`, first)
          )
          if (loop._tag === "Failure") return fail(first, callId, loop.failure)

          let previous: unknown
          let outcome: Outcome | undefined
          for (const [i, [entry, decision]] of resolved.entries()) {
            const args = steps[i]!.args
            let input: unknown
            if (i === 0) {
              input =
                Object.keys(args).length === 0
                  ? (request.input ?? {})
                  : isObject(request.input) || request.input === undefined
                    ? { ...(request.input as Record<string, unknown> | undefined), ...args }
                    : request.input
            } else {
              input =
                Object.keys(args).length === 0 ? previous : isObject(previous) ? { ...previous, ...args } : previous
              const fits = yield* Effect.exit(Boundary.decodeInput(entry.tool, input))
              if (Exit.isFailure(fits)) {
                const issue = Option.getOrUndefined(Cause.findErrorOption(fits.cause))
                return fail(
                  entry.path,
                  callId,
                  new PipelineMismatch({ from: resolved[i - 1]![0].path, to: entry.path, issues: issue?.issues ?? "" })
                )
              }
            }
            outcome = yield* runStep(entry, decision, input, callId, request.alternatives)
            if (!outcome.ok) return outcome
            previous = outcome.result
          }
          return outcome!
        })

      const offers = (observer: Observer.ObserverShape, recipe: Recipe.Recipe) =>
        Effect.forEach(registry.list(observer, recipe), (entry) =>
          Effect.map(Effect.orDie(registry.describe(entry.path)), (description): Offer => {
            const decision = Recipe.decide(recipe, entry.path, entry.tool.trust)
            return {
              ...description,
              requiredTrust: decision._tag === "Allowed" ? decision.requiredTrust : entry.tool.trust,
              requiresApproval: decision._tag === "Allowed" && decision.approval
            }
          })
        )

      return Invoker.of({
        registry,
        invoke,
        invokeText: (text) =>
          Effect.gen(function* () {
            const recipe = yield* Recipe.CurrentRecipe
            const parsed = Parse.response(text)
            const outcomes: Array<Outcome> = parsed.errors.map((e) => fail("", randomUUID(), e))
            const max = recipe.maxCallsPerResponse ?? Number.POSITIVE_INFINITY
            let used = 0
            for (const invocation of parsed.invocations) {
              const path = invocation.steps[0]?.path ?? ""
              used += invocation.steps.length
              if (used > max) {
                outcomes.push(fail(path, randomUUID(), new TooManyCalls({ path, max })))
                continue
              }
              outcomes.push(yield* invoke({ steps: invocation.steps, input: {} }))
            }
            return outcomes
          }),
        list: Effect.gen(function* () {
          return yield* offers(yield* Observer.Observer, yield* Recipe.CurrentRecipe)
        }),
        describe: (path) =>
          Effect.gen(function* () {
            const observer = yield* Observer.Observer
            const recipe = yield* Recipe.CurrentRecipe
            const entry = yield* registry.resolve(path)
            // A path the caller may not use is not described either: offer and permission never drift.
            if (!registry.list(observer, recipe).includes(entry)) {
              return yield* new UnknownPath({ path, suggestions: [] })
            }
            const [offer] = yield* offers(observer, { ...recipe, allow: [path], deny: recipe.deny ?? [] })
            return offer!
          })
      })
    })
  )

/**
 * Invokes through the road in context.
 *
 * @category invoking
 * @since 0.1.0
 */
export const invoke = (
  request: Request
): Effect.Effect<Outcome, never, Invoker | Observer.Observer | Recipe.CurrentRecipe> =>
  Effect.flatMap(Invoker, (road) => road.invoke(request))
