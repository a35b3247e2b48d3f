/**
 * The law of the road: for generated tools, inputs, recipes, callers and
 * failures, the road (`road/Road.ts`) equals the composition of the wrappers
 * it replaced (`reference.ts`: `Traced(Audited(stages(RateLimited(
 * CircuitBreaker(timed)))))`). Equal means the same outcomes (values and
 * typed failures), the same records (trace rows, audit entries before and
 * after, events, refusal reasons) and the same limiter and breaker decisions
 * over a whole run of calls, compared after ids and times are numbered in
 * order of appearance.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Events, Invoke, Loop, Modes, Recipe, Registry, Server, Sessions } from "@ugent/agentese"
import { Family, Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Workspace } from "@ugent/tools"
import { AuditStore, RateLimited, Stores, TraceStore } from "@ugent/wrappers"
import { Arbitrary, Effect, Fiber, Layer, Schema, Stream } from "effect"
import { CircuitBreaker as Breaker } from "effect/persistence"
import { ReferenceInvoker, referenceLayer } from "./reference.ts"

class Fault extends Schema.TaggedError<Fault>()("GenFault", { n: Schema.Int }) {
  static readonly kind: ToolError.Kind = "failed"
  override get message() {
    return `the tool failed on ${this.n}`
  }
}
class Mistake extends Schema.TaggedError<Mistake>()("GenMistake", { n: Schema.Int }) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message() {
    return `${this.n} is not a good input`
  }
}

const Input = Schema.Struct({
  n: Schema.Int,
  mode: Schema.Literals(["ok", "fault", "mistake", "big", "secret"])
})
const Output = Schema.Struct({ n: Schema.Int, echo: Schema.String })

/** The generated family: one tool per kind of effect, one whose level depends on its input. */
const tool = (name: string, trust: Trust.TrustLevel, effects: Partial<Tool.Effects>) =>
  Tool.make({
    name,
    description: `${name}, generated`,
    trust,
    effects,
    input: Input,
    output: Output,
    failure: Schema.Union([Fault, Mistake]),
    run: ({ n, mode }) =>
      mode === "fault"
        ? Effect.fail(new Fault({ n }))
        : mode === "mistake"
          ? Effect.fail(new Mistake({ n }))
          : Effect.succeed({ n, echo: mode === "big" ? "x".repeat(2000 + n) : `n=${n}` })
  })

const family = Family.make({
  name: "gen",
  prefix: "world.tools",
  tools: {
    "gen.read": tool("gen.read", 0, {}),
    "gen.write": tool("gen.write", 1, { writesFs: true }),
    "gen.net": tool("gen.net", 0, { callsNetwork: true }),
    "gen.shell": tool("gen.shell", 3, { callsShell: true }),
    "gen.once": tool("gen.once", 1, { writesFs: true, irreversible: true }),
    "gen.leveled": tool("gen.leveled", 0, {})
  },
  levels: { "gen.leveled": { min: 0, of: (input) => (input.n > 5 ? 2 : 0) } }
})
const paths = Object.keys({
  "gen.read": 0,
  "gen.write": 0,
  "gen.net": 0,
  "gen.shell": 0,
  "gen.once": 0,
  "gen.leveled": 0
}).map((name) => `world.tools.${name}`)

/** A forbidden rule, so that some inputs meet one. */
const noSecrets: Trust.ForbiddenRule = {
  name: "no-secrets",
  check: ({ input }) =>
    typeof input === "object" && input !== null && (input as { mode?: unknown }).mode === "secret"
      ? "secrets are never read"
      : undefined
}

const Case = Schema.Struct({
  trust: Schema.Literals([0, 1, 2, 3]),
  approves: Schema.Boolean,
  deny: Schema.Array(Schema.Literals(paths)).check(Schema.isMaxLength(2)),
  raise: Schema.Array(Schema.Literals(paths)).check(Schema.isMaxLength(2)),
  approval: Schema.Array(Schema.Literals(paths)).check(Schema.isMaxLength(2)),
  perMinute: Schema.Literals([2, 4, 100]),
  calls: Schema.Array(
    Schema.Struct({
      path: Schema.Literals(paths),
      n: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 })),
      mode: Schema.Literals(["ok", "fault", "mistake", "big", "secret"])
    })
  ).check(Schema.isMinLength(1), Schema.isMaxLength(12))
})
type Case = typeof Case.Type

const recipeOf = (c: Case): Recipe.Recipe => ({
  name: "generated",
  allow: ["*"],
  deny: [...c.deny],
  requireApproval: [...c.approval],
  minTrust: Object.fromEntries(c.raise.map((p) => [p, 2])),
  profile: "shared",
  globalRateLimits: { perMinute: 1000 },
  rateLimits: { perMinute: 1000 },
  toolRateLimits: { "world.tools.gen.*": { perMinute: c.perMinute } },
  resultBudgetTokens: 300,
  loop: { count: 2, windowSeconds: 60 }
})

/** A breaker that opens after two faults in a row, so that runs of calls open it. */
const breaker = { tripPolicy: Breaker.consecutive(2) }

const approver = (c: Case) => () => Effect.succeed(c.approves)

/** The reference's caller, as `Server.layer` makes the road's from its options. */
const caller = (c: Case) =>
  Layer.mergeAll(
    Observer.layer({ id: "agent", trust: c.trust }),
    Recipe.layer(recipeOf(c)),
    Trust.approverLayer(approver(c))
  )

/** The reference side: the registry, stores and detectors assembled as `Server.layer` does, and the old road. */
const referenceSide = (root: string) => {
  const workspace = Workspace.layer({ root })
  const stores = Stores.layerMemory()
  const modes = Modes.layerMemory
  const registry = Registry.layer([family]).pipe(Layer.provide(Layer.mergeAll(workspace, stores, modes)))
  return referenceLayer({ root, breaker }).pipe(
    Layer.provide(
      Layer.mergeAll(
        RateLimited.layerMemory,
        Breaker.layerStoreMemory(),
        Loop.layerMemory,
        Sessions.layerMemory(),
        modes
      )
    ),
    Layer.provideMerge(Layer.mergeAll(registry, Events.layer, stores))
  )
}

/** Ids and times, numbered in order of appearance, so two runs compare. */
const numbering = () => {
  const ids = new Map<string, string>()
  const id = (s: string) => {
    let n = ids.get(s)
    if (n === undefined) {
      n = `#${ids.size}`
      ids.set(s, n)
    }
    return n
  }
  const norm = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(norm)
    if (typeof v === "object" && v !== null) {
      const out: Record<string, unknown> = {}
      for (const [k, x] of Object.entries(v)) {
        if (["at", "startedAt", "durationMillis", "retryAfterMillis"].includes(k)) continue
        if (["id", "callId", "rootId", "parentId"].includes(k) && typeof x === "string") {
          out[k] = x.replace(/^[0-9a-f-]{36}/, (m) => id(m))
        } else out[k] = norm(x)
      }
      return out
    }
    if (typeof v === "string") {
      // A retry hint in a message varies with time; ids inside messages are numbered too.
      return v
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (m) => id(m))
        .replace(/(in|Wait) \d+ s/g, "$1 N s")
    }
    return v
  }
  return norm
}

/** Runs a case's calls on one side, and everything it recorded. */
const runSide = <R>(invoke: (path: string, input: unknown) => Effect.Effect<Invoke.Outcome, never, R>, c: Case) =>
  Effect.gen(function* () {
    const events = yield* Events.Events
    const seen: Array<Events.Event> = []
    const stream = yield* events.subscribe
    const fiber = yield* Effect.forkChild(Stream.runForEach(stream, (e) => Effect.sync(() => seen.push(e))))
    const outcomes: Array<Invoke.Outcome> = []
    for (const call of c.calls) outcomes.push(yield* invoke(call.path, { n: call.n, mode: call.mode }))
    yield* Effect.sleep("20 millis")
    yield* Fiber.interrupt(fiber)
    const traces = yield* (yield* TraceStore.TraceStore).recent({ limit: 1000 })
    const audit = yield* (yield* AuditStore.AuditStore).list({ limit: 1000 })
    const norm = numbering()
    const ordered = <T extends { readonly id: string }>(rows: ReadonlyArray<T>) =>
      [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return norm({
      outcomes: outcomes.map((o) => (o.ok ? { ok: true, result: o.result, path: o.path, callId: o.callId } : o)),
      traces: ordered(traces),
      audit: ordered(audit),
      events: seen
    })
  })

const runCase = (c: Case) =>
  Effect.gen(function* () {
    const root = mkdtempSync(join(tmpdir(), "ugent-road-law-"))
    try {
      const server = Server.layer({
        root,
        stores: "memory",
        families: [family],
        observerId: "agent",
        trust: c.trust,
        recipe: recipeOf(c),
        approver: approver(c),
        breaker
      })
      const road = yield* runSide((path, input) => Invoke.invoke({ path, input }), c).pipe(
        Effect.provide(server),
        Effect.provideService(Trust.ForbiddenRules, [...Trust.defaultForbiddenRules, noSecrets]),
        Effect.scoped
      )
      const reference = yield* runSide(
        (path, input) => Effect.flatMap(ReferenceInvoker, (r) => r.invoke(path, input)),
        c
      ).pipe(
        Effect.provide(Layer.merge(referenceSide(root), caller(c))),
        Effect.provideService(Trust.ForbiddenRules, [...Trust.defaultForbiddenRules, noSecrets]),
        Effect.scoped
      )
      return { road, reference }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

describe("the road", () => {
  it.live("law: the road equals the composition of the wrappers it replaced (outcomes, records, limits, breaker)", () =>
    Effect.gen(function* () {
      const cases = yield* Arbitrary.sampleEffect(Arbitrary.schema(Case), { count: 60, seed: 25 })
      for (const c of cases) {
        const { road, reference } = yield* runCase(c)
        assert.deepStrictEqual(road, reference, JSON.stringify(c))
      }
    })
  )
})
