import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Changes, Tool, Trust } from "@ugent/core"
import { Cached, isCached } from "@ugent/wrappers"
import { Deferred, Effect, Exit, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"

class Flaky extends Schema.TaggedError<Flaky>()("Flaky", {}) {}

/** A read-only tool that counts its runs and echoes its input. */
const counting = (options?: { readonly readsFs?: boolean; readonly failFirst?: number }) => {
  const state = { runs: 0 }
  const tool = Tool.make({
    name: "test.read",
    description: "Echoes a path.",
    input: Schema.Struct({ path: Schema.String, n: Schema.optionalKey(Schema.Number) }),
    output: Schema.Struct({ path: Schema.String, run: Schema.Number }),
    failure: Flaky,
    effects: { readsFs: options?.readsFs ?? true },
    run: ({ path }) =>
      Effect.suspend(() => {
        state.runs++
        return state.runs <= (options?.failFirst ?? 0)
          ? Effect.fail(new Flaky())
          : Effect.succeed({ path, run: state.runs })
      })
  })
  return { tool, state }
}

const change = (relative: string, root = "/ws"): Changes.FileChange => ({
  path: `${root}/${relative}`,
  relative,
  kind: "modified"
})

const env = Layer.mergeAll(Trust.grant(0), Changes.layer)

describe("Cached", () => {
  describe("hits and misses", () => {
    it.effect("serves a second call with the same input from the cache", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = Cached(tool)
        const a = yield* cached.run({ path: "a.txt" })
        const b = yield* cached.run({ path: "a.txt" })
        assert.deepStrictEqual(a, b)
        assert.strictEqual(state.runs, 1)
      }).pipe(Effect.provide(env))
    )

    it.effect("keys by the canonical encoded input, whatever the key order", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = tool.pipe(Cached())
        yield* cached.run({ path: "a.txt", n: 1 })
        yield* cached.run({ n: 1, path: "a.txt" })
        yield* cached.run({ path: "a.txt", n: 2 })
        assert.strictEqual(state.runs, 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("does not keep failures", () =>
      Effect.gen(function* () {
        const { tool, state } = counting({ failFirst: 1 })
        const cached = Cached(tool)
        const first = yield* Effect.exit(cached.run({ path: "a.txt" }))
        assert.isTrue(Exit.isFailure(first))
        const second = yield* cached.run({ path: "a.txt" })
        assert.strictEqual(second.run, 2)
        yield* cached.run({ path: "a.txt" })
        assert.strictEqual(state.runs, 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("forgets an entry after its time to live (virtual time)", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = Cached(tool, { timeToLive: "1 minute" })
        yield* cached.run({ path: "a.txt" })
        yield* TestClock.adjust("59 seconds")
        yield* cached.run({ path: "a.txt" })
        assert.strictEqual(state.runs, 1)
        yield* TestClock.adjust("2 seconds")
        yield* cached.run({ path: "a.txt" })
        assert.strictEqual(state.runs, 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("keeps at most `capacity` entries, least recently used out first", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = Cached(tool, { capacity: 2 })
        yield* cached.run({ path: "a" })
        yield* cached.run({ path: "b" })
        yield* cached.run({ path: "a" }) // a is now the most recent
        yield* cached.run({ path: "c" }) // evicts b
        assert.strictEqual(state.runs, 3)
        yield* cached.run({ path: "a" })
        assert.strictEqual(state.runs, 3)
        yield* cached.run({ path: "b" })
        assert.strictEqual(state.runs, 4)
      }).pipe(Effect.provide(env))
    )

    it.effect("runs an input with no JSON encoding uncached", () =>
      Effect.gen(function* () {
        let runs = 0
        const tool = Tool.make({
          name: "test.fn",
          description: "Takes a function.",
          input: Schema.Any,
          output: Schema.Number,
          run: () => Effect.sync(() => ++runs)
        })
        const cached = Cached(tool)
        const f = () => 1
        yield* cached.run(f)
        yield* cached.run(f)
        assert.strictEqual(runs, 2)
      }).pipe(Effect.provide(env))
    )
  })

  describe("concurrency and interruption", () => {
    it.effect("shares one run between concurrent misses", () =>
      Effect.gen(function* () {
        let runs = 0
        const gate = yield* Deferred.make<void>()
        const tool = Tool.make({
          name: "test.slow",
          description: "Waits for a gate.",
          input: Schema.Struct({ path: Schema.String }),
          output: Schema.Number,
          run: () =>
            Effect.andThen(
              Effect.sync(() => ++runs),
              Effect.as(Deferred.await(gate), 1)
            )
        })
        const cached = Cached(tool)
        const fiber = yield* Effect.forkChild(
          Effect.all(
            Array.from({ length: 50 }, () => cached.run({ path: "x" })),
            { concurrency: "unbounded" }
          )
        )
        yield* Effect.yieldNow
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(fiber)
        assert.strictEqual(runs, 1)
      }).pipe(Effect.provide(env))
    )

    it.effect("interrupting the only caller interrupts the shared run and forgets it", () =>
      Effect.gen(function* () {
        let runs = 0
        let released = 0
        const started = yield* Deferred.make<void>()
        const tool = Tool.make({
          name: "test.hang",
          description: "Holds a resource until interrupted.",
          input: Schema.Struct({ path: Schema.String }),
          output: Schema.Number,
          run: () =>
            Effect.acquireUseRelease(
              Effect.sync(() => ++runs),
              (n) => Effect.andThen(Deferred.succeed(started, undefined), runs > 1 ? Effect.succeed(n) : Effect.never),
              () => Effect.sync(() => released++)
            )
        })
        const cached = Cached(tool)
        const fiber = yield* Effect.forkChild(cached.run({ path: "x" }))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        assert.strictEqual(released, 1)
        const second = yield* cached.run({ path: "x" })
        assert.strictEqual(second, 2)
      }).pipe(Effect.provide(env))
    )
  })

  describe("invalidation by Changes", () => {
    it.effect("drops the entry of a changed path, and only that one", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = Cached(tool)
        yield* cached.run({ path: "a.txt" })
        yield* cached.run({ path: "b.txt" })
        yield* Changes.publish(change("a.txt"))
        const a = yield* cached.run({ path: "a.txt" })
        assert.strictEqual(a.run, 3)
        yield* cached.run({ path: "b.txt" })
        assert.strictEqual(state.runs, 3)
      }).pipe(Effect.provide(env))
    )

    it.effect("matches the canonical path and `./` prefixes", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = Cached(tool)
        yield* cached.run({ path: "/ws/src/a.ts" })
        yield* cached.run({ path: "./src/b.ts" })
        yield* Changes.publish(change("src/a.ts"))
        yield* Changes.publish(change("src/b.ts"))
        yield* cached.run({ path: "/ws/src/a.ts" })
        yield* cached.run({ path: "./src/b.ts" })
        assert.strictEqual(state.runs, 4)
      }).pipe(Effect.provide(env))
    )

    it.effect("drops reads of a directory, the root or a glob above the changed file", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = Cached(tool)
        for (const path of ["src", ".", "src/**/*.ts", "lib"]) yield* cached.run({ path })
        yield* Changes.publish(change("src/deep/a.ts"))
        for (const path of ["src", ".", "src/**/*.ts", "lib"]) yield* cached.run({ path })
        assert.strictEqual(state.runs, 7) // lib stays cached
      }).pipe(Effect.provide(env))
    )

    it.effect("drops an entry whose output names the changed path", () =>
      Effect.gen(function* () {
        let runs = 0
        const list = Tool.make({
          name: "test.find",
          description: "Finds files by a query.",
          input: Schema.Struct({ query: Schema.String }),
          output: Schema.Array(Schema.String),
          run: () => Effect.sync(() => [`src/hit-${++runs}.ts`, "README.md"])
        })
        const cached = Cached(list)
        yield* cached.run({ query: "hit" })
        yield* Changes.publish(change("other.ts"))
        yield* cached.run({ query: "hit" })
        assert.strictEqual(runs, 1)
        yield* Changes.publish(change("README.md"))
        yield* cached.run({ query: "hit" })
        assert.strictEqual(runs, 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("drops a file-system read that names no path on any change", () =>
      Effect.gen(function* () {
        let runs = 0
        const status = Tool.make({
          name: "test.status",
          description: "Reads the whole workspace.",
          input: Schema.Struct({ verbose: Schema.Boolean }),
          output: Schema.Number,
          effects: { readsFs: true },
          run: () => Effect.sync(() => ++runs)
        })
        const cached = Cached(status)
        yield* cached.run({ verbose: true })
        yield* Changes.publish(change("anything/at/all.txt"))
        yield* cached.run({ verbose: true })
        assert.strictEqual(runs, 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("does not keep a read that was running when its file changed", () =>
      Effect.gen(function* () {
        let runs = 0
        const gate = yield* Deferred.make<void>()
        const tool = Tool.make({
          name: "test.slowread",
          description: "A read that takes a while.",
          input: Schema.Struct({ path: Schema.String }),
          output: Schema.Number,
          run: () =>
            Effect.suspend(() => {
              const n = ++runs
              return n === 1 ? Effect.as(Deferred.await(gate), n) : Effect.succeed(n)
            })
        })
        const cached = Cached(tool)
        const fiber = yield* Effect.forkChild(cached.run({ path: "a.txt" }))
        yield* Effect.yieldNow
        yield* Changes.publish(change("a.txt"))
        yield* Deferred.succeed(gate, undefined)
        assert.strictEqual(yield* Fiber.join(fiber), 1)
        assert.strictEqual(yield* cached.run({ path: "a.txt" }), 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("does not keep a read whose output names a file changed while it ran", () =>
      Effect.gen(function* () {
        let runs = 0
        const gate = yield* Deferred.make<void>()
        const tool = Tool.make({
          name: "test.slowfind",
          description: "A search that takes a while.",
          input: Schema.Struct({ query: Schema.String }),
          output: Schema.Array(Schema.String),
          run: () =>
            Effect.suspend(() => {
              const n = ++runs
              return n === 1 ? Effect.as(Deferred.await(gate), ["found.ts"]) : Effect.succeed(["found.ts"])
            })
        })
        const cached = Cached(tool)
        const fiber = yield* Effect.forkChild(cached.run({ query: "q" }))
        yield* Effect.yieldNow
        yield* Changes.publish(change("found.ts"))
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(fiber)
        yield* cached.run({ query: "q" })
        assert.strictEqual(runs, 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("never serves a stale read of a real file after a write", () =>
      Effect.gen(function* () {
        const root = mkdtempSync(join(tmpdir(), "ugent-cached-"))
        yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(root, { recursive: true, force: true })))
        const file = join(root, "notes.md")
        writeFileSync(file, "v1")
        const read = Tool.make({
          name: "test.file.read",
          description: "Reads a file of the workspace.",
          input: Schema.Struct({ path: Schema.String }),
          output: Schema.String,
          effects: { readsFs: true },
          run: ({ path }) => Effect.sync(() => readFileSync(join(root, path), "utf8"))
        })
        const write = (content: string) =>
          Effect.andThen(
            Effect.sync(() => writeFileSync(file, content)),
            Changes.publish({ path: file, relative: "notes.md", kind: "modified" })
          )
        const cached = Cached(read)
        for (let i = 2; i <= 20; i++) {
          yield* cached.run({ path: "notes.md" })
          yield* write(`v${i}`)
          assert.strictEqual(yield* cached.run({ path: "notes.md" }), `v${i}`)
        }
      }).pipe(Effect.scoped, Effect.provide(env))
    )

    it.effect("keeps separate entries under separate hubs", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const cached = Cached(tool)
        yield* cached.run({ path: "a" }).pipe(Effect.provide(Changes.layer))
        yield* cached.run({ path: "a" }).pipe(Effect.provide(Changes.layer))
        assert.strictEqual(state.runs, 2)
      }).pipe(Effect.provide(Trust.grant(0)))
    )
  })

  describe("idempotence and trust", () => {
    it.effect("Cached(Cached(f)) is Cached(f)", () =>
      Effect.gen(function* () {
        const { tool, state } = counting()
        const once = Cached(tool)
        const twice = Cached(once)
        assert.strictEqual(twice, once)
        assert.isTrue(isCached(twice))
        assert.isFalse(isCached(tool))
        yield* twice.run({ path: "a" })
        yield* once.run({ path: "a" })
        assert.strictEqual(state.runs, 1)
      }).pipe(Effect.provide(env))
    )

    it("refuses a tool above L0 at run time too", () => {
      const write = Tool.make({
        name: "test.write",
        description: "Writes.",
        trust: 1,
        effects: { writesFs: true },
        input: Schema.String,
        output: Schema.String,
        run: Effect.succeed
      })
      // The type test (Cached.types.ts) shows the compile error; here the guard behind it.
      const sneak: Tool.Any = write
      assert.throws(() => Cached(sneak as never), /not read-only/)
    })

    it("keeps the tool's name, version, schemas and trust", () => {
      const { tool } = counting()
      const cached = Cached(tool)
      assert.strictEqual(cached.name, tool.name)
      assert.strictEqual(cached.version, tool.version)
      assert.strictEqual(cached.input, tool.input)
      assert.strictEqual(cached.failure, tool.failure)
      assert.strictEqual(cached.trust, 0)
    })
  })
})
