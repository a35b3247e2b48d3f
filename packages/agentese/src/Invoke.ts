/**
 * `invoke` is the single road every projection takes (the CLI, the HTTP API,
 * the MCP server, the `effect/ai` Toolkit, an agent loop, in-process
 * callers). A request becomes steps (each resolved and decided by the
 * recipe before any runs); each step is one call of the road (`road/Road.ts`)
 * on its route (`road/Route.ts`) for its caller (`road/Caller.ts`): admitted
 * (`road/Admission.ts`), run, encoded once, and recorded once by the journal
 * (`road/Journal.ts`), so a refusal at any stage leaves its records; the
 * result is an {@link Outcome}. The caller (`Observer`) and its `Recipe` come
 * from the server's configuration, never from the request, and the settings
 * (limits, timeout, loop window, budget) from the caller's profile, its
 * recipe and the host's overrides.
 *
 * @since 0.1.0
 */
import { Observer, ToolError, Trust } from "@ugent/core"
import { Workspace } from "@ugent/tools"
import {
  ApprovalStore,
  AuditStore,
  type CircuitBreakerOptions,
  MemoryStore,
  OnStoreError,
  Summarized,
  Traced,
  TraceStore
} from "@ugent/wrappers"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { CircuitBreaker as Breaker, RateLimiter } from "effect/persistence"
import * as Budget from "./Budget.ts"
import * as Catalog from "./Catalog.ts"
import * as Events from "./Events.ts"
import { type Fanout, plan, type Step as PlannedStep } from "./internal/road/plan.ts"
import * as Loop from "./Loop.ts"
import * as Parse from "./Parse.ts"
import * as Profile from "./Profile.ts"
import * as Recipe from "./Recipe.ts"
import type * as Render from "./Render.ts"
import { Registry, type RegistryShape, UnknownPath } from "./Registry.ts"
import * as Modes from "./self/Modes.ts"
import * as Sessions from "./Sessions.ts"
import * as SessionState from "./SessionState.ts"
import { PolicyDenied } from "./road/Admission.ts"
import * as Caller from "./road/Caller.ts"
import * as RoadJournal from "./road/Journal.ts"
import * as Road from "./road/Road.ts"
import { PipelineMismatch } from "./road/Road.ts"
import * as Route from "./road/Route.ts"

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
 * `OverBudget` summary) and its JSON text.
 *
 * @category models
 * @since 0.2.0
 */
export type SuccessOutcome = Road.SuccessOutcome

/**
 * A call that did not succeed: the failure's JSON and its kind.
 *
 * @category models
 * @since 0.2.0
 */
export type FailureOutcome = Road.FailureOutcome

/**
 * What a call came to, as plain JSON plus its kind.
 *
 * @category models
 * @since 0.1.0
 */
export type Outcome = Road.Outcome

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
  /**
   * Who reads the result, when the projection's client hands it to a model
   * (MCP): the outcome then also carries the text made for that model
   * (`modelText`), within that client's budget unless the recipe or host
   * sets one. See `Render`.
   */
  readonly audience?: Render.Audience | undefined
  /** The client's own id of this call (Claude Code's tool-use id, Codex's turn), kept in the trace and audit. */
  readonly clientCallId?: string | undefined
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
  /**
   * Parses a model response and invokes every call in it, up to the recipe's
   * `maxCallsPerResponse`, in order; consecutive calls that only read run side
   * by side (`Route.runsBeside`), the outcomes in the reply's order.
   */
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
  /** The workspace's root (its real path) when one is served: stored approvals are keyed with it. */
  readonly workspaceRoot?: string | undefined
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

/** Working memory's tools as the road serves them, for the hints in its results. */
const memoryTools = { read: Budget.memoryRead, list: "self.memory.list" }

const failureOf = Road.failure

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
      const sessions = Context.get(services, Sessions.Sessions)
      // Kept approvals where the stores have them; the workspace, where served, binds them to its files' bytes.
      const approvals = yield* Effect.serviceOption(ApprovalStore.ApprovalStore)
      const workspace = yield* Effect.serviceOption(Workspace.Workspace)
      const fallback = options.fallbackProfile ?? "local"
      const road = Road.make({
        sinks: RoadJournal.make({
          audit: Context.get(services, AuditStore.AuditStore),
          trace: Context.get(services, TraceStore.TraceStore),
          events
        }),
        events,
        loops: Context.get(services, Loop.LoopDetector),
        sessions,
        memory: Context.get(services, MemoryStore.MemoryStore),
        modes: Context.get(services, Modes.Modes),
        limiter: Context.get(services, RateLimiter.RateLimiter),
        breakers: Context.get(services, Breaker.CircuitBreakerStore),
        breaker: options.breaker,
        root: options.root,
        onStoreError: Context.get(services as Context.Context<never>, OnStoreError),
        instance: yield* SessionState.Instance,
        approvals: Option.match(approvals, {
          onNone: () => undefined,
          onSome: (store) => ({ store, workspace: Option.getOrUndefined(workspace) })
        })
      })
      // What the tools may read besides their capabilities: the road's services, working memory's names, and (once
      // made, below) the road itself, for a tool that acts for its caller (a sub-agent).
      let base = Context.add(services, Summarized.MemoryTools, memoryTools) as Context.Context<never>

      const targets = new Map(registry.entries.map((entry) => [entry.path, Route.target(registry, entry)] as const))

      // Settings and routes are worked out once per recipe (a recipe rarely changes while a server runs).
      const perRecipe = new WeakMap<
        Recipe.Recipe,
        { readonly settings: Profile.Settings; readonly routes: Map<string, Route.Route> }
      >()
      const forRecipe = (recipe: Recipe.Recipe) => {
        let found = perRecipe.get(recipe)
        if (found === undefined) {
          found = { settings: Profile.settings(recipe, options, fallback), routes: new Map() }
          perRecipe.set(recipe, found)
        }
        return found
      }
      const settingsOf = (recipe: Recipe.Recipe): Profile.Settings => forRecipe(recipe).settings
      const routeOf = (recipe: Recipe.Recipe, path: string): Route.Route => {
        const { settings, routes } = forRecipe(recipe)
        let route = routes.get(path)
        if (route === undefined) {
          // Under the local profile a route has no breaker, unless the host configures one.
          route = Route.make(targets.get(path)!, recipe, settings, {
            breaker: options.breaker !== undefined || settings.profile !== "local"
          })
          routes.set(path, route)
        }
        return route
      }

      // A caller is made once per observer, recipe and session, with the contexts its calls run with.
      const callers = new WeakMap<Observer.ObserverShape, WeakMap<Recipe.Recipe, Map<string, Caller.Caller>>>()
      const callerOf = (
        observer: Observer.ObserverShape,
        recipe: Recipe.Recipe,
        session: string | undefined,
        forbidden: ReadonlyArray<Trust.ForbiddenRule>
      ): Caller.Caller => {
        let byRecipe = callers.get(observer)
        if (byRecipe === undefined) {
          byRecipe = new WeakMap()
          callers.set(observer, byRecipe)
        }
        let bySession = byRecipe.get(recipe)
        if (bySession === undefined) {
          bySession = new Map()
          byRecipe.set(recipe, bySession)
        }
        const key = session ?? ""
        let found = bySession.get(key)
        if (found === undefined || found.forbidden !== forbidden) {
          found = Caller.make({ observer, recipe, settings: settingsOf(recipe), session, forbidden, base })
          bySession.set(key, found)
          // Sessions come and go with connections: keep the callers of the most recent thousand.
          if (bySession.size > 1000) bySession.delete(bySession.keys().next().value!)
        }
        return found
      }

      /** One call of one path by the caller in context, as the road makes it. */
      const call = (
        path: string,
        callId: string,
        raw: unknown,
        step: {
          readonly recipe: Recipe.Recipe
          readonly session: string | undefined
          readonly from: string | undefined
          readonly refusal: unknown
          readonly own?: ReadonlyArray<string> | undefined
          readonly audience?: Render.Audience | undefined
          readonly clientCallId?: string | undefined
        },
        alternatives: ReadonlyArray<string> | undefined
      ): Effect.Effect<Outcome, never, Observer.Observer> =>
        Effect.flatMap(Observer.Observer, (observer) =>
          Effect.flatMap(Trust.ForbiddenRules, (forbidden) =>
            road.call(routeOf(step.recipe, path), callerOf(observer, step.recipe, step.session, forbidden), raw, {
              id: callId,
              from: step.from,
              own: step.own,
              refusal: step.refusal,
              alternatives,
              audience: step.audience,
              clientCallId: step.clientCallId
            })
          )
        )

      /** The options every call of one request shares. */
      interface Shared {
        readonly recipe: Recipe.Recipe
        readonly session: string | undefined
        readonly from: string | undefined
        readonly audience: Render.Audience | undefined
        readonly clientCallId: string | undefined
        readonly alternatives: ReadonlyArray<string> | undefined
      }

      /** One planned call on its input. */
      const callStep = (step: PlannedStep, id: string, input: unknown, shared: Shared) =>
        call(
          step.entry.path,
          id,
          input,
          {
            recipe: shared.recipe,
            session: shared.session,
            from: shared.from,
            refusal: undefined,
            own: Object.keys(step.args),
            audience: shared.audience,
            clientCallId: shared.clientCallId
          },
          shared.alternatives
        )

      /**
       * A fan-out step: each call on the same input (with its own arguments), side by side when every one only
       * reads with no one to ask, else one after another; its result is their results in order. Each call is a
       * call of the road of its own (`<id>.<n>`), with its own record; a model reads their texts one under another,
       * each within its share of the budget.
       */
      const fanout = (
        group: Fanout,
        id: string,
        input: (args: Readonly<Record<string, unknown>>) => unknown,
        shared: Shared
      ): Effect.Effect<Outcome, never, Observer.Observer> =>
        Effect.gen(function* () {
          const label = Parse.fanout(
            group.all.map((s) => ({ path: s.entry.path, args: s.args })),
            group.mode
          ).path
          const n = group.all.length
          const audience =
            shared.audience === undefined
              ? undefined
              : { ...shared.audience, limit: Budget.share(shared.audience.limit, n) }
          const concurrency = readsOnly(
            group.all.map((s) => ({ path: s.entry.path, args: s.args })),
            shared.recipe
          )
            ? ("unbounded" as const)
            : 1
          const one = (step: PlannedStep, k: number) =>
            callStep(step, `${id}.${k}`, input(step.args), { ...shared, audience })
          let outcomes: ReadonlyArray<Outcome>
          if (group.mode === "fail-fast") {
            // The first failure interrupts the calls still running and is the step's failure.
            const all = yield* Effect.result(
              Effect.forEach(
                group.all,
                (step, k) => Effect.flatMap(one(step, k), (o) => (o.ok ? Effect.succeed(o) : Effect.fail(o))),
                { concurrency }
              )
            )
            if (all._tag === "Failure") return { ...all.failure, callId: id }
            outcomes = all.success
          } else {
            outcomes = yield* Effect.forEach(group.all, one, { concurrency })
            const failed = outcomes.flatMap((o, k) => (o.ok ? [] : [{ k, o }]))
            if (failed.length > 0) {
              const error = ToolError.allFailed(
                failed.map(({ k, o }) => ({ key: `${k + 1} ${o.path}`, error: o.error }))
              )
              return { ...Road.failure(label, id, error), kind: (failed[0]!.o as Road.FailureOutcome).kind }
            }
          }
          const results = outcomes.map((o) => (o.ok ? o.result : undefined))
          const modelText =
            shared.audience === undefined
              ? undefined
              : outcomes
                  .map(
                    (o, k) =>
                      `[${k + 1}/${n}] ${shared.audience!.toolName(o.path)}\n${(o.ok && (o.modelText ?? o.text)) || ""}`
                  )
                  .join("\n\n")
          return Road.success(results, JSON.stringify(results), label, id, modelText)
        })

      const invoke = (request: Request): Effect.Effect<Outcome, never, Observer.Observer | Recipe.CurrentRecipe> =>
        Effect.gen(function* () {
          const observer = yield* Observer.Observer
          const recipe = yield* Recipe.CurrentRecipe
          const callId = Traced.makeCallId()
          const planned = plan(registry, recipe, request)
          if (planned._tag === "Unplanned") return failureOf(planned.path, callId, planned.error)
          const session = request.session ?? observer.session
          // A denied call, of any step, is refused before anything runs, and that refusal is recorded.
          const denied = planned.steps
            .flatMap((s) => ("all" in s ? s.all : [s]))
            .find((s) => s.decision._tag === "Denied")
          const steps = denied === undefined ? planned.steps : [denied]
          let previous: unknown
          let outcome: Outcome | undefined
          for (const [i, step] of steps.entries()) {
            const before = denied === undefined && i > 0 ? steps[i - 1]! : undefined
            const shared: Shared = {
              recipe,
              session,
              from:
                before === undefined
                  ? undefined
                  : "all" in before
                    ? before.all.map((s) => s.entry.path).join(" &&& ")
                    : before.entry.path,
              // Only the last step's result reaches the model; the others feed the next step.
              audience: i === steps.length - 1 ? request.audience : undefined,
              clientCallId: request.clientCallId,
              alternatives: request.alternatives
            }
            const id = i === 0 ? callId : `${callId}.${i}`
            const inputOf = (args: Readonly<Record<string, unknown>>) =>
              denied === undefined ? stepInput(i, args, request.input, previous) : (request.input ?? {})
            outcome =
              "all" in step
                ? yield* fanout(step, id, inputOf, shared)
                : yield* callStep(step, id, inputOf(step.args), shared)
            if (!outcome.ok) return i === 0 ? outcome : { ...outcome, callId }
            previous = outcome.result
          }
          if (outcome === undefined || !outcome.ok || outcome.callId === callId) return outcome!
          // A pipeline answers under its first step's id, with the texts the road printed of its last step.
          return Road.success(
            outcome.result,
            outcome.text ?? JSON.stringify(outcome.result),
            outcome.path,
            callId,
            outcome.modelText
          )
        })

      /** Whether every step only reads, with no person to ask: such calls may run side by side. */
      const readsOnly = (steps: ReadonlyArray<Parse.Step>, recipe: Recipe.Recipe): boolean =>
        steps.flatMap(Parse.callsOf).every((step) => {
          const target = targets.get(step.path)
          if (target === undefined) return true
          const decision = Recipe.decide(recipe, step.path, Catalog.baseLevel(target.entry))
          return target.readOnly && !(decision._tag === "Allowed" && (decision.approval || decision.requiredTrust >= 2))
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
          const first = outcomes.length
          let used = 0
          // Consecutive calls that only read run side by side; any other waits for those before it and runs alone.
          let together: Array<readonly [number, Parse.Invocation]> = []
          const runTogether = Effect.suspend(() => {
            const batch = together
            together = []
            return Effect.forEach(
              batch,
              ([i, invocation]) =>
                Effect.map(invoke({ steps: invocation.steps, input: {}, session: options?.session }), (o) => {
                  outcomes[i] = o
                }),
              { concurrency: "unbounded", discard: true }
            )
          })
          for (const [n, invocation] of parsed.invocations.entries()) {
            const i = first + n
            used += invocation.steps.reduce((n, s) => n + Parse.callsOf(s).length, 0)
            if (used > max) {
              const path = invocation.steps[0] === undefined ? "" : (Parse.callsOf(invocation.steps[0])[0]?.path ?? "")
              const entry = registry.get(path)
              const refusal = new TooManyCalls({ path, max })
              // A known path's refusal is recorded like any other; an unknown one is only reported.
              outcomes[i] =
                entry === undefined
                  ? failureOf(path, Traced.makeCallId(), refusal)
                  : yield* call(
                      path,
                      Traced.makeCallId(),
                      {},
                      { recipe, session: options?.session ?? observer.session, from: undefined, refusal },
                      undefined
                    )
              continue
            }
            if (readsOnly(invocation.steps, recipe)) together.push([i, invocation])
            else {
              yield* runTogether
              outcomes[i] = yield* invoke({ steps: invocation.steps, input: {}, session: options?.session })
            }
          }
          yield* runTogether
          return outcomes
        })

      const self = Invoker.of({
        registry,
        workspaceRoot: Option.getOrUndefined(workspace)?.root,
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
      // Callers are made on their first call, after this: their tools' context holds the road.
      base = Context.add(base, Invoker, self) as Context.Context<never>
      return self
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
