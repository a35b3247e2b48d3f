import { assert, describe, it } from "@effect/vitest"
import { StoreError, TraceStore } from "@ugent/wrappers"
import { Effect, Exit, Option } from "effect"
import { backends, withStores } from "./backends.ts"

const call = (id: string, fields: Partial<TraceStore.TraceRecord> = {}): TraceStore.TraceRecord => ({
  id,
  rootId: id,
  path: "file.read",
  input: { path: `${id}.txt` },
  status: "success",
  startedAt: 1_000,
  durationMillis: 1.25,
  alternatives: [],
  ...fields
})

const store = TraceStore.TraceStore

for (const { backend, skip } of backends) {
  describe.skipIf(skip !== undefined)(`TraceStore (${backend.name})${skip ? ` ${skip}` : ""}`, () => {
    describe("append / get", () => {
      it.live("returns a record as it was appended, optional fields included", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const traces = yield* store
            const full = call("full", {
              parentId: "p",
              rootId: "r",
              path: "world.tools.search.grep",
              input: { pattern: "a.b", flags: ["-i"], nested: { n: 1.5, ok: true, none: null } },
              output: null,
              error: { _tag: "Timeout", message: "The call timed out.", millis: 30 },
              status: "failure",
              startedAt: 1_795_000_000_123,
              durationMillis: 0.123456789,
              alternatives: ["file.read", "search.glob"],
              observerId: "claude",
              sessionId: "s-1"
            })
            const bare = call("bare")
            yield* traces.append([full, bare])
            assert.deepStrictEqual(yield* traces.get("full"), Option.some(full))
            assert.deepStrictEqual(yield* traces.get("bare"), Option.some(bare))
          })
        )
      )

      it.live("keeps a JSON null output apart from no output", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const traces = yield* store
            yield* traces.append([call("a", { output: null }), call("b")])
            const a = Option.getOrThrow(yield* traces.get("a"))
            const b = Option.getOrThrow(yield* traces.get("b"))
            assert.isTrue("output" in a)
            assert.isNull(a.output)
            assert.isFalse("output" in b)
          })
        )
      )

      it.live("finds nothing under an unknown id", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            assert.isTrue(Option.isNone(yield* (yield* store).get("missing")))
          })
        )
      )

      it.live("ignores a second record with the same id (the first write wins)", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const traces = yield* store
            yield* traces.append([call("x", { path: "first" })])
            yield* traces.append([call("x", { path: "second" }), call("x", { path: "third" })])
            assert.strictEqual(Option.getOrThrow(yield* traces.get("x")).path, "first")
          })
        )
      )
    })

    describe("call trees", () => {
      const tree = [
        call("root", { startedAt: 0 }),
        call("c2", { rootId: "root", parentId: "root", startedAt: 20 }),
        call("c1", { rootId: "root", parentId: "root", startedAt: 10 }),
        call("c1b", { rootId: "root", parentId: "root", startedAt: 10 }),
        call("g1", { rootId: "root", parentId: "c1", startedAt: 11 }),
        call("other", { startedAt: 5 })
      ]

      it.live("children are the direct children, oldest first, ties by id", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const traces = yield* store
            yield* traces.append(tree)
            assert.deepStrictEqual(
              (yield* traces.children("root")).map((r) => r.id),
              ["c1", "c1b", "c2"]
            )
            assert.deepStrictEqual(
              (yield* traces.children("c1")).map((r) => r.id),
              ["g1"]
            )
            assert.deepStrictEqual(yield* traces.children("g1"), [])
          })
        )
      )

      it.live("byRoot is the whole tree with its root, oldest first", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const traces = yield* store
            yield* traces.append(tree)
            assert.deepStrictEqual(
              (yield* traces.byRoot("root")).map((r) => r.id),
              ["root", "c1", "c1b", "g1", "c2"]
            )
            assert.deepStrictEqual(
              (yield* traces.byRoot("other")).map((r) => r.id),
              ["other"]
            )
          })
        )
      )
    })

    describe("recent", () => {
      it.live("returns the newest records first, at most limit, optionally of one path", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const traces = yield* store
            yield* traces.append([
              call("a", { startedAt: 1, path: "file.read" }),
              call("b", { startedAt: 3, path: "git.log" }),
              call("c", { startedAt: 2, path: "file.read" }),
              call("d", { startedAt: 3, path: "file.read" })
            ])
            assert.deepStrictEqual(
              (yield* traces.recent({ limit: 3 })).map((r) => r.id),
              ["d", "b", "c"]
            )
            assert.deepStrictEqual(
              (yield* traces.recent({ limit: 10, path: "file.read" })).map((r) => r.id),
              ["d", "c", "a"]
            )
            assert.deepStrictEqual(yield* traces.recent({ limit: 0 }), [])
          })
        )
      )
    })

    describe("concurrency", () => {
      it.live("concurrent appends lose nothing", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const traces = yield* store
            yield* Effect.forEach(
              Array.from({ length: 40 }, (_, fiber) => fiber),
              (fiber) =>
                Effect.forEach(
                  Array.from({ length: 50 }, (_, i) => i),
                  (i) => traces.append([call(`f${fiber}-${i}`, { rootId: "many", startedAt: i })]),
                  { discard: true }
                ),
              { concurrency: "unbounded", discard: true }
            )
            const all = yield* traces.byRoot("many")
            assert.strictEqual(all.length, 2000)
            assert.strictEqual(new Set(all.map((r) => r.id)).size, 2000)
          }),
          { batchSize: 64 }
        )
      )
    })

    if (backend.name !== "memory") {
      describe("batching", () => {
        it.live("reads see records still waiting for the writer", () =>
          withStores(
            backend,
            Effect.gen(function* () {
              const traces = yield* store
              yield* traces.append([call("pending")])
              assert.isTrue(Option.isSome(yield* traces.get("pending")))
            }),
            { lingerMillis: 60_000 }
          )
        )

        it.live("writes every pending record when the layer's scope closes", () =>
          Effect.scoped(
            Effect.gen(function* () {
              const db = yield* backend.database
              const n = 5_000
              // The writer lingers a minute, so only the finalizer can write these.
              yield* Effect.provide(
                Effect.flatMap(store, (traces) =>
                  Effect.forEach(
                    Array.from({ length: n / 50 }, (_, chunk) => chunk),
                    (chunk) =>
                      traces.append(
                        Array.from({ length: 50 }, (_, i) => call(`r${chunk * 50 + i}`, { rootId: "shutdown" }))
                      ),
                    { discard: true }
                  )
                ),
                db.open({ lingerMillis: 60_000, batchSize: 10_000, maxPending: 100_000 })
              )
              const count = yield* Effect.provide(
                Effect.map(
                  Effect.flatMap(store, (traces) => traces.byRoot("shutdown")),
                  (rs) => rs.length
                ),
                db.open()
              )
              assert.strictEqual(count, n)
            })
          )
        )

        it.live("fails an append after its scope has closed", () =>
          Effect.scoped(
            Effect.gen(function* () {
              const db = yield* backend.database
              const traces = yield* Effect.provide(store, db.open())
              const exit = yield* Effect.exit(traces.append([call("late")]))
              assert.isTrue(Exit.isFailure(exit))
              const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
              assert.isTrue(
                error !== undefined && error._tag === "Fail" && error.error instanceof StoreError.StoreError
              )
            })
          )
        )

        it.live("past maxPending an append writes the backlog itself", () =>
          Effect.scoped(
            Effect.gen(function* () {
              const db = yield* backend.database
              yield* Effect.provide(
                Effect.gen(function* () {
                  const traces = yield* store
                  for (let i = 0; i < 30; i++) yield* traces.append([call(`b${i}`, { rootId: "backlog" })])
                  // A second store on the same database sees what the first wrote, not what it holds.
                  const written = yield* Effect.provide(
                    Effect.flatMap(store, (other) => other.byRoot("backlog")),
                    db.open()
                  )
                  assert.isAtLeast(written.length, 30 - 8)
                  assert.isBelow(written.length, 30)
                }),
                db.open({ lingerMillis: 60_000, batchSize: 8, maxPending: 8 })
              )
            })
          )
        )
      })
    }
  })
}
