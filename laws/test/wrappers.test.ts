/**
 * The wrapper laws (`Laws.wrapper`) over every wrapper of `@ugent/wrappers`:
 * transparency for generated tools (pure, effectful, sleeping, failing) and
 * inputs, idempotence where it is promised (Cached), the gate laws where a
 * wrapper admits or refuses calls (CircuitBreaker, RateLimited), and the laws
 * the kit cannot state generically: Traced distributes over composition, and
 * Summarized keeps exactly the bare result in memory.
 */
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Changes, Tool, Trust } from "@ugent/core"
import { Laws, Report, RuleSet, WrapperTests } from "@ugent/laws"
import { Edit, Read, Workspace, Write } from "@ugent/tools"
import {
  Audited,
  AuditStore,
  Cached,
  CircuitBreaker,
  CircuitOpen,
  type Limit,
  MemoryStore,
  memoryRead,
  RateLimited,
  Retry,
  Sandboxed,
  Summarized,
  Timeout,
  Traced,
  TraceStore
} from "@ugent/wrappers"
import { Duration, Effect, Exit, Layer, Schema } from "effect"
import { CircuitBreaker as Breaker } from "effect/persistence"

const check = { runs: 40, testTimeout: 60_000 } as const

Laws.wrapper("Traced", { wrap: (t) => Traced(t), failures: true, provide: TraceStore.layerMemory(), ...check })

Laws.wrapper("Cached", { wrap: (t) => Cached(t), failures: true, idempotent: true, ...check })

Laws.wrapper("Retry", { wrap: (t) => Retry(t), failures: true, idempotent: true, ...check })

Laws.wrapper("Timeout", { wrap: (t) => Timeout(t, "1 day"), failures: true, ...check })

Laws.wrapper("Sandboxed", { wrap: (t) => Sandboxed(t), failures: true, ...check })

Laws.wrapper("Audited", { wrap: (t) => Audited(t), failures: true, provide: AuditStore.layerMemory(), ...check })

// A store whose every circuit is open: the breaker refuses every call.
const alwaysOpen = Layer.succeed(Breaker.CircuitBreakerStore, {
  admit: (key: string) =>
    Effect.fail(
      new Breaker.CircuitBreakerError({ reason: new Breaker.CircuitOpen({ key, retryAfter: Duration.minutes(1) }) })
    ),
  record: () => Effect.succeed(undefined),
  state: (key: string) =>
    Effect.succeed({ _tag: "Open" as const, key, retryAfter: Duration.minutes(1), consecutiveOpenings: 1 })
})

Laws.wrapper("CircuitBreaker", {
  // A key of its own per case: failures of one generated tool never open another's circuit.
  wrap: (t) => CircuitBreaker(t, { key: randomUUID() }),
  failures: true,
  allow: CircuitBreaker.layerMemory(),
  deny: alwaysOpen,
  denied: (e) => e instanceof CircuitOpen,
  provide: CircuitBreaker.layerMemory(),
  ...check
})

const limits = (limit: Limit) =>
  Layer.succeed(RateLimited.Limits, { global: [limit], observer: [limit], tool: [limit] })

Laws.wrapper("RateLimited", {
  wrap: (t) => RateLimited(t, { key: randomUUID(), prefix: `${randomUUID()}:` }),
  failures: true,
  allow: limits({ limit: 1_000_000, window: "1 minute" }),
  // A limit of 0 refuses every call, the first included.
  deny: limits({ limit: 0, window: "1 hour" }),
  denied: (e) => (e as { readonly _tag?: unknown })._tag === "RateLimited",
  provide: RateLimited.layerMemory,
  ...check
})

const inc = Tool.fromFunction({ name: "num.inc", input: Schema.Number, output: Schema.Number, f: (n: number) => n + 1 })
class Odd extends Schema.TaggedError<Odd>()("Odd", { n: Schema.Number }) {}
const evenOnly = Tool.make({
  name: "num.even",
  description: "Fails on odd numbers.",
  input: Schema.Number,
  output: Schema.Number,
  failure: Odd,
  run: (n) => (n % 2 === 0 ? Effect.succeed(n) : Effect.fail(new Odd({ n })))
})

const observe = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit)
    ? { ok: exit.value }
    : { failed: exit.cause.reasons.map((r) => (r._tag === "Fail" ? r.error : r._tag)) }

describe("Traced (laws beyond transparency)", () => {
  it.effect.prop(
    "distributes over composition: same result, and one trace per step under the parent",
    { n: Schema.Int },
    ({ n }) =>
      Effect.gen(function* () {
        const whole = yield* Effect.exit(Traced(Tool.andThen(inc, evenOnly)).run(n))
        const stepwise = Traced(Tool.andThen(Traced(inc), Traced(evenOnly)), { path: "parent" })
        const split = yield* Effect.exit(stepwise.run(n))
        assert.deepStrictEqual(observe(split), observe(whole))
        const store = yield* TraceStore.TraceStore
        const [parent] = yield* store.recent({ limit: 1, path: "parent" })
        const children = yield* store.children(parent!.id)
        assert.deepStrictEqual(
          children.map((c) => c.path),
          ["num.inc", "num.even"]
        )
      }).pipe(Effect.provide(Layer.merge(TraceStore.layerMemory(), Trust.grant(0)))),
    { arbitrary: { runs: 40 } }
  )
})

describe("Summarized (memory round trip)", () => {
  it.effect.prop(
    "memory.read of the id gives back the bare tool's result",
    { n: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 2000 })) },
    ({ n }) =>
      Effect.gen(function* () {
        const lines = Tool.fromFunction({
          name: "text.lines",
          input: Schema.Number,
          output: Schema.String,
          f: (k: number) => Array.from({ length: k }, (_, i) => `line ${i}`).join("\n")
        })
        const { memoryId, chars } = yield* Summarized(lines).run(n)
        const full = yield* memoryRead.run({ id: memoryId, length: 100_000 })
        assert.strictEqual(full.content, yield* lines.run(n))
        assert.strictEqual(full.total, chars)
      }).pipe(Effect.provide(Layer.merge(MemoryStore.layerMemory(), Trust.grant(0)))),
    { arbitrary: { runs: 40 } }
  )
})

describe("the laws catch a wrapper that breaks them", () => {
  it.effect("a caching wrapper that ignores its input is not transparent", () =>
    Effect.gen(function* () {
      let first: unknown
      const broken = (t: Tool.Any) =>
        Tool.wrap(
          t,
          (run) => (a) =>
            first === undefined
              ? Effect.tap(run(a), (b) =>
                  Effect.sync(() => {
                    first = b
                  })
                )
              : Effect.succeed(first)
        )
      const reports = yield* RuleSet.check("broken cache", WrapperTests.wrapper({ wrap: broken }), {
        seed: 3,
        runs: 40
      })
      assert.isFalse(reports.every(Report.isPassed))
    })
  )
})

describe("Cached over the real file tools", () => {
  it.effect("a read after file.write or file.edit through the workspace is never stale", () =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "ugent-cached-tools-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(root, { recursive: true, force: true })))
      writeFileSync(join(root, "notes.md"), "v0\n")
      const read = Cached(Read.read)
      const layer = Layer.mergeAll(Workspace.layer({ root }), Trust.grant(1), Changes.layer)
      yield* Effect.gen(function* () {
        let seen = yield* read.run({ path: "notes.md" })
        for (let i = 1; i <= 5; i++) {
          yield* Write.write.run({ path: "notes.md", content: `v${i}\n`, proof: seen.proof })
          seen = yield* read.run({ path: "./notes.md" })
          assert.include(seen.content, `v${i}`)
          // A second read of the same path, with nothing written in between, is served from the cache.
          assert.strictEqual(yield* read.run({ path: "./notes.md" }), seen)
        }
        yield* Edit.edit.run({ path: "notes.md", oldText: "v5", newText: "edited", proof: seen.proof })
        assert.include((yield* read.run({ path: "notes.md" })).content, "edited")
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped)
  )
})
