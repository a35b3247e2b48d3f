/**
 * The road as it was composed of the wrappers it replaces, kept as the law's
 * other side: `Traced(Audited(stages(RateLimited(CircuitBreaker(timed)))))`
 * around each registered tool, with the decisions put into the context for
 * the wrappers to read back. `road/Road.ts` must equal it on every outcome,
 * record, limiter and breaker decision (see `Road.law.test.ts`).
 */
import { Boundary, type Family, Observer as ObserverModule, ReadProof, Tool, ToolError, Trust } from "@ugent/core"
import {
  Audited,
  Journal,
  AuditStore,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type Limit,
  MemoryStore,
  RateLimited,
  Summarized,
  TimedOut,
  Traced,
  TraceStore
} from "@ugent/wrappers"
import { Cause, Clock, Context, Effect, Exit, Layer, Option, Schema } from "effect"
import type { CircuitBreaker as Breaker, RateLimiter } from "effect/persistence"
import * as Budget from "../../src/Budget.ts"
import * as Events from "../../src/Events.ts"
import type * as Invoke from "../../src/Invoke.ts"
import * as Loop from "../../src/Loop.ts"
import { matches } from "../../src/Path.ts"
import * as ProfileModule from "../../src/Profile.ts"
import * as Recipe from "../../src/Recipe.ts"
import * as RegistryModule from "../../src/Registry.ts"
import { PolicyDenied } from "../../src/road/Admission.ts"
import { PipelineMismatch } from "../../src/road/Road.ts"
import * as Modes from "../../src/self/Modes.ts"
import * as SessionsModule from "../../src/Sessions.ts"

type Entry = RegistryModule.Entry
/** What the road decided about a call before it runs. */
export interface Plan {
  readonly decision: Recipe.Decision
  /** The caller's recipe, for a level that depends on the input. */
  readonly recipe: Recipe.Recipe
  readonly settings: ProfileModule.Settings
  /** The caller's session, when it keeps state (an MCP connection, an agent loop). */
  readonly session: string | undefined
  /** For a pipeline step after the first: the path whose output is this input. */
  readonly from: string | undefined
  /** A refusal decided before the call, recorded like any other. */
  readonly refusal: unknown
}

/** The plan of the call being made: set around each call, read by its stages. */
export const CurrentPlan = Context.Reference<Plan | undefined>("ugent/agentese/road/CurrentPlan", {
  defaultValue: () => undefined
})

/** What the stages need from the road. */
export interface Deps {
  readonly loops: Loop.LoopDetectorShape
  readonly sessions: SessionsModule.SessionsShape
  readonly memory: MemoryStore.MemoryStoreShape
  readonly modes: Modes.ModesShape
  /** The workspace root, to spell paths canonically. */
  readonly root: string | undefined
  readonly breaker: Omit<CircuitBreakerOptions, "key"> | undefined
  /** Whether the path's input has a `proof` a session may supply. */
  readonly takesProof: boolean
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Stage: the level is checked before the input is decoded, so a caller learns nothing of a path it may not use. */
const checkLevel = (entry: Entry, required: Trust.TrustLevel, observer: ObserverModule.ObserverShape) =>
  observer.trust < required
    ? Effect.fail(
        new ToolError.TrustDenied({
          tool: entry.path,
          required,
          actual: observer.trust,
          ...(required > entry.tool.trust ? { reason: "the recipe raises this path's level" } : {})
        })
      )
    : Effect.void

/** Stage: in a session, a write without a token gets the newest proof the caller was shown of that file. */
const supplyProof = (deps: Deps, session: string | undefined, raw: unknown): Effect.Effect<unknown> => {
  if (!deps.takesProof || session === undefined || !isRecord(raw) || raw.proof !== undefined) {
    return Effect.succeed(raw)
  }
  if (typeof raw.path !== "string") return Effect.succeed(raw)
  return Effect.map(deps.sessions.proofOf(session, Loop.canonicalPath(raw.path, deps.root)), (token) =>
    token === undefined ? raw : { ...raw, proof: token }
  )
}

/** Stage: decode once; for a later pipeline step a misfit is a PipelineMismatch. */
const decode = (entry: Entry, from: string | undefined, input: unknown) =>
  from === undefined
    ? Boundary.decodeInput(entry.tool, input)
    : Effect.mapError(
        Boundary.decodeInput(entry.tool, input, { onExcessProperty: "ignore" }),
        (e) => new PipelineMismatch({ from, to: entry.path, issues: e._tag === "InvalidInput" ? e.issues : e.message })
      )

/** The limits of a call under its settings. */
const limitsFor = (settings: ProfileModule.Settings, path: string) => {
  const tool: ReadonlyArray<Limit> = settings.tool.find(([pattern]) => matches(pattern, path))?.[1] ?? []
  return { global: settings.global, observer: settings.caller, tool }
}

/** Stage: proofs in a result are remembered for the session, under the path asked for and the file's own. */
const rememberProofs = (deps: Deps, session: string, asked: unknown, output: unknown): Effect.Effect<void> => {
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
      const paths = new Set([Loop.canonicalPath(proof.path, deps.root)])
      if (askedPath !== undefined && proofs.length === 1) paths.add(Loop.canonicalPath(askedPath, deps.root))
      return Effect.forEach(paths, (p) => deps.sessions.remember(session, p, proof), { discard: true })
    },
    { discard: true }
  )
}

/**
 * The served tool of a path: the stages above around the registered tool,
 * traced and audited. Its input is the caller's raw JSON; its output is the
 * encoded result (or an over-budget summary).
 */
export const serve = (entry: Entry, deps: Deps) => {
  const path = entry.path
  const writes = entry.tool.effects.writesFs || entry.tool.effects.callsShell
  const refusesInPlan = Modes.refusedInPlanMode(entry.tool)
  // Rate limits first (a refused call must not count against the tool), then the breaker around the timed run.
  const timed = Tool.wrap(
    entry.tool,
    (run) => (a) =>
      Effect.flatMap(CurrentPlan, (plan: Plan | undefined) => {
        const millis = plan?.settings.timeoutMillis ?? 120_000
        return Effect.timeoutOrElse(run(a), {
          duration: millis,
          orElse: () => Effect.fail(new TimedOut({ tool: path, timeoutMillis: millis, retryable: true }))
        })
      })
  )
  const guarded = timed.pipe(
    CircuitBreaker({ ...deps.breaker, key: path }),
    RateLimited({ key: path, toolPerObserver: true })
  )

  const stages = (raw: unknown) =>
    Effect.gen(function* () {
      const plan = yield* CurrentPlan
      if (plan === undefined) return yield* Effect.die(new Error(`${path} was called off the road (no plan)`))
      if (plan.refusal !== undefined) return yield* Effect.fail(plan.refusal)
      const decision = plan.decision
      if (decision._tag === "Denied") return yield* new PolicyDenied({ path, reason: decision.reason })
      const observer = yield* ObserverRef
      yield* checkLevel(entry, decision.requiredTrust, observer)
      if (refusesInPlan && (yield* deps.modes.get(yield* Modes.currentKey)) === "plan") {
        return yield* new Modes.PlanMode({ path })
      }
      const input = yield* supplyProof(deps, plan.session, raw)
      const decoded = yield* decode(entry, plan.from, input)
      // A level that depends on the input is decided now, on the decoded input, by the same recipe.
      const decided = entry.level === undefined ? decision : Recipe.decide(plan.recipe, path, entry.level.of(decoded))
      if (decided._tag === "Denied") return yield* new PolicyDenied({ path, reason: decided.reason })
      yield* checkLevel(entry, decided.requiredTrust, observer)
      const loop = plan.settings.loop
      const loopKey =
        loop === undefined ? undefined : Loop.keyOf(observer.id, path, decoded, deps.root, entry.tool.input)
      if (loop !== undefined && loopKey !== undefined) yield* deps.loops.check(loopKey, path, loop)
      yield* Trust.admit({
        tool: path,
        observer,
        required: decided.requiredTrust,
        toolTrust: entry.level === undefined ? entry.tool.trust : decided.requiredTrust,
        irreversible: entry.tool.effects.irreversible,
        approval: decided.approval ? "the recipe asks for approval of every call of this path" : undefined,
        input: decoded
      })
      // A call admitted below the tool's own level (its input needs less) runs with the capability the tool asks for.
      const runner = observer.trust < entry.tool.trust ? { ...observer, trust: entry.tool.trust } : observer
      const output = yield* guarded
        .run(decoded)
        .pipe(Effect.provideService(RateLimited.Limits, limitsFor(plan.settings, path)), Trust.runAs(runner))
      if (writes) yield* deps.loops.progress
      if (loop !== undefined && loopKey !== undefined) {
        yield* deps.loops.record(loopKey, Loop.fingerprint(output), loop)
      }
      const encoded = yield* Boundary.encodeOutput(entry.tool, output)
      const text = Boundary.jsonText(encoded)
      if (Budget.estimateTokens(text) > plan.settings.budgetTokens) {
        const over = yield* Budget.apply({
          path,
          encoded,
          text,
          budgetTokens: plan.settings.budgetTokens,
          memory: deps.memory,
          present: presentation(entry, output, decoded),
          owner: observer.id
        })
        if (over !== undefined) return over
      }
      // A proof is printed as its token, so a result whose text has none carries none: no walk through a listing.
      if (plan.session !== undefined && text.includes(ReadProof.tokenPrefix)) {
        yield* rememberProofs(deps, plan.session, input, output)
      }
      return encoded
    })

  // The registered tool is closed over its services and needs only the capabilities `runAs` provides; the
  // stages read the caller and the road's limiter and breaker store, which the road provides on every call.
  const core = Tool.wrap(entry.tool, () => stages as (a: unknown) => Effect.Effect<unknown, unknown, Needs>, {
    output: Schema.Unknown,
    failure: Schema.Unknown
  }) as Tool.Tool<unknown, unknown, unknown, Needs>
  // The road's audit records the result in a sentence: an over-budget result's own, else what it holds.
  const summarizeResult = (o: unknown) => {
    const over = o as { readonly overBudget?: unknown; readonly summary?: unknown } | undefined
    return over?.overBudget === true && typeof over.summary === "string" ? over.summary : Budget.sentence(path, o)
  }
  return core.pipe(Audited({ path, summarizeResult }), Traced({ path }))
}

/** What a served call needs from the road, besides the plan. */
export type Needs = ObserverModule.Observer | RateLimiter.RateLimiter | Breaker.CircuitBreakerStore

const ObserverRef = ObserverModule.Observer

const presentation = (entry: Entry, output: unknown, input: unknown): Family.Presentation | undefined => {
  if (entry.present === undefined) return undefined
  try {
    return entry.present(output, input)
  } catch {
    // A presenter that throws only loses its sentence: the generic summary is used.
    return undefined
  }
}

/** The reference's invoker for one path at a time: the old road's call, its events and its outcome. */
export const referenceLayer = (options: {
  readonly root: string
  readonly breaker?: Omit<CircuitBreakerOptions, "key"> | undefined
  readonly fallbackProfile?: ProfileModule.Profile | undefined
}) =>
  Layer.effect(
    ReferenceInvoker,
    Effect.gen(function* () {
      const registry = yield* RegistryModule.Registry
      const events = yield* Events.Events
      const services = yield* Effect.context<
        | RateLimiter.RateLimiter
        | Breaker.CircuitBreakerStore
        | TraceStore.TraceStore
        | AuditStore.AuditStore
        | MemoryStore.MemoryStore
        | Loop.LoopDetector
        | SessionsModule.Sessions
        | Modes.Modes
      >()
      const deps = {
        loops: Context.get(services, Loop.LoopDetector),
        sessions: Context.get(services, SessionsModule.Sessions),
        memory: Context.get(services, MemoryStore.MemoryStore),
        modes: Context.get(services, Modes.Modes),
        root: options.root,
        breaker: options.breaker
      }
      const served = new Map(
        registry.entries.map((entry) => {
          const input = registry.describeEntry(entry).input as { readonly properties?: Record<string, unknown> }
          return [entry.path, serve(entry, { ...deps, takesProof: input.properties?.proof !== undefined })] as const
        })
      )
      const invoke = (
        path: string,
        input: unknown
      ): Effect.Effect<Invoke.Outcome, never, ObserverModule.Observer | Recipe.CurrentRecipe> =>
        Effect.gen(function* () {
          const observer = yield* ObserverModule.Observer
          const recipe = yield* Recipe.CurrentRecipe
          const callId = Traced.makeCallId()
          const entry = registry.get(path)!
          const settings = ProfileModule.settings(recipe, {}, options.fallbackProfile ?? "local")
          const decision = Recipe.decide(recipe, entry.path, entry.level?.min ?? entry.tool.trust)
          const started = yield* Clock.currentTimeMillis
          yield* events.publish({
            _tag: "tool.invoked",
            id: callId,
            path,
            observerId: observer.id,
            at: started,
            trust: observer.trust,
            input: Journal.inputSummary(input)
          })
          const exit = yield* served
            .get(path)!
            .run(input)
            .pipe(
              Effect.provideService(CurrentPlan, {
                decision,
                recipe,
                settings,
                session: observer.session,
                from: undefined,
                refusal: undefined
              }),
              Effect.provideService(SessionsModule.Current, observer.session),
              Traced.withCallId(callId),
              Effect.provideService(Summarized.MemoryTools, { read: "self.memory.read", list: "self.memory.list" }),
              Effect.provideContext(Context.merge(services, Context.make(ObserverModule.Observer, observer))),
              Effect.exit
            )
          let outcome: Invoke.Outcome
          if (Exit.isSuccess(exit)) outcome = { ok: true, result: exit.value, path, callId }
          else {
            const error = Cause.findErrorOption(exit.cause)
            if (Option.isNone(error)) return yield* Effect.failCause(exit.cause as Cause.Cause<never>)
            outcome = {
              ok: false,
              error: ToolError.toJson(error.value),
              kind: ToolError.kindOf(error.value),
              path,
              callId
            }
          }
          const at = yield* Clock.currentTimeMillis
          const common = { id: outcome.callId, path: outcome.path, observerId: observer.id, at, trust: observer.trust }
          if (outcome.ok) {
            const over = outcome.result as { readonly overBudget?: unknown; readonly summary?: unknown }
            yield* events.publish({
              _tag: "tool.completed",
              ...common,
              durationMillis: at - started,
              resultSummary:
                over?.overBudget === true && typeof over.summary === "string"
                  ? over.summary
                  : Budget.sentence(path, outcome.result),
              estimatedTokens: Journal.estimateTokens(Journal.resultText(outcome.result))
            })
          } else if (outcome.kind === "denied") {
            yield* events.publish({ _tag: "tool.trust_denied", ...common, reason: outcome.error.message })
          } else if (outcome.kind === "rate_limited") {
            yield* events.publish({
              _tag: "tool.rate_limited",
              ...common,
              retryAfterMillis: ToolError.retryAfterMillis(outcome.error) ?? 0
            })
          } else {
            yield* events.publish({
              _tag: "tool.failed",
              ...common,
              durationMillis: at - started,
              error: { _tag: outcome.error._tag, message: outcome.error.message }
            })
          }
          return outcome
        })
      return { invoke }
    })
  )

/** The reference road, as a service. */
export class ReferenceInvoker extends Context.Service<
  ReferenceInvoker,
  {
    readonly invoke: (
      path: string,
      input: unknown
    ) => Effect.Effect<Invoke.Outcome, never, ObserverModule.Observer | Recipe.CurrentRecipe>
  }
>()("ugent/test/ReferenceInvoker") {}
