/**
 * Threat 50: traces that keep whole inputs and outputs forever, so reads fill the disk. Every backend
 * keeps a payload longer than the head as its head, its size and its hash (whole only when asked),
 * and removes records by age and by size, oldest first.
 */
import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Tool, Trust } from "@ugent/core"
import { Traced, TraceStore } from "@ugent/wrappers"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { backends, type Database } from "./backends.ts"

/** An 85 KB file, as `file.read` returns it. */
const content = Array.from({ length: 1000 }, (_, i) => `${String(i + 1).padStart(4, " ")}\t${"x".repeat(80)}`).join(
  "\n"
)
const read = Tool.make({
  name: "file.read",
  description: "Reads a file.",
  input: Schema.Struct({ path: Schema.String }),
  output: Schema.Struct({ path: Schema.String, content: Schema.String }),
  run: ({ path }) => Effect.succeed({ path, content })
})
const tracedRead = Traced(read, { path: "world.tools.file.read" })
const outputText = JSON.stringify({ path: "big.txt", content })

/** What the database holds for the trace table, in bytes: its pages on SQLite, its relation on PostgreSQL. */
const occupied = (db: Database) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.onDialectOrElse({
      pg: () => sql<{ readonly size: string }>`SELECT pg_total_relation_size('ugent_traces') AS size`,
      orElse: () =>
        sql<{
          readonly size: number
        }>`SELECT (page_count - freelist_count) * page_size AS size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`
    })
    return Number(rows[0]?.size ?? 0)
  }).pipe(Effect.provide(db.client!()))

const record = (
  id: string,
  startedAt: number,
  input: TraceStore.TraceRecord["input"] = { path: `${id}.txt` }
): TraceStore.TraceRecord => ({
  id,
  rootId: id,
  path: "file.read",
  input,
  status: "success",
  startedAt,
  durationMillis: 1,
  alternatives: []
})

const day = 86_400_000

for (const { backend, skip } of backends) {
  describe.skipIf(skip !== undefined)(`threat 50: bounded traces (${backend.name})${skip ? ` ${skip}` : ""}`, () => {
    it.live(
      "threat 50: 1,000 traced reads of an 85 KB file keep the store small; each row holds the head, the hash and the size",
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const db = yield* backend.database
            const ids = yield* Effect.gen(function* () {
              const out: Array<string> = []
              for (let i = 0; i < 1000; i++) {
                const id = Traced.makeCallId()
                yield* tracedRead.run({ path: "big.txt" }).pipe(Traced.withCallId(id))
                out.push(id)
              }
              const store = yield* TraceStore.TraceStore
              yield* store.flush
              const first = Option.getOrThrow(yield* store.get(out[0]!))
              return { out, first }
            }).pipe(Effect.provide(Layer.merge(db.open({ traces: {} }), Trust.grant(0))))
            const row = ids.first
            assert.deepStrictEqual(row.input, { path: "big.txt" }, "a small payload is kept whole")
            assert.strictEqual(row.output, outputText.slice(0, TraceStore.defaults.headChars))
            assert.deepStrictEqual(row.clipped, {
              output: {
                size: Buffer.byteLength(outputText),
                sha256: createHash("sha256").update(outputText).digest("hex")
              }
            })
            assert.isAbove(outputText.length, 85_000)
            if (db.client !== undefined) {
              const bytes = yield* occupied(db)
              // 1,000 whole outputs would be 85 MB; heads are 1.5 KB each.
              assert.isBelow(bytes, 8 * 1024 * 1024, `the trace table holds ${bytes} bytes`)
            }
          })
        ),
      120_000
    )

    it.live("threat 50: full payloads only when asked: then a row holds the whole output", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* backend.database
          const row = yield* Effect.gen(function* () {
            yield* tracedRead.run({ path: "big.txt" }).pipe(Traced.withCallId("full-1"))
            return Option.getOrThrow(yield* (yield* TraceStore.TraceStore).get("full-1"))
          }).pipe(Effect.provide(Layer.merge(db.open({ traces: { payloads: "full" } }), Trust.grant(0))))
          assert.deepStrictEqual(row.output, { path: "big.txt", content })
          assert.isUndefined(row.clipped)
        })
      )
    )

    it.live("threat 50: records older than maxAge are removed, the newer kept", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* backend.database
          const now = Date.now()
          const { pruned, kept } = yield* Effect.gen(function* () {
            const store = yield* TraceStore.TraceStore
            yield* store.append([
              record("ten-days", now - 10 * day),
              record("eight-days", now - 8 * day),
              record("six-days", now - 6 * day),
              record("now", now)
            ])
            const pruned = yield* store.prune
            const kept = yield* store.recent({ limit: 10 })
            return { pruned, kept: kept.map((r) => r.id) }
          }).pipe(Effect.provide(db.open({ traces: { retention: { maxAge: "7 days", maxBytes: Infinity } } })))
          // The memory store prunes on append already; the SQL stores by their writer or on demand.
          assert.deepStrictEqual(kept, ["now", "six-days"])
          assert.strictEqual(pruned.bySize, 0)
        })
      )
    )

    it.live("threat 50: past maxBytes the oldest records are removed first, the newest kept under the bound", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* backend.database
          const now = Date.now()
          const maxBytes = 50_000
          const kept = yield* Effect.gen(function* () {
            const store = yield* TraceStore.TraceStore
            // 100 records of about 1.1 KB each, oldest first.
            for (let i = 0; i < 100; i++) {
              yield* store.append([record(`r${String(i).padStart(3, "0")}`, now - (100 - i) * 1000, "y".repeat(1000))])
            }
            yield* store.prune
            return (yield* store.recent({ limit: 1000 })).map((r) => r.id)
          }).pipe(Effect.provide(db.open({ traces: { retention: { maxAge: Duration.infinity, maxBytes } } })))
          assert.isAbove(kept.length, 30)
          assert.isBelow(kept.length, 50)
          // The newest ones, without a gap: everything older than the oldest kept is gone.
          assert.deepStrictEqual(
            kept,
            Array.from({ length: kept.length }, (_, i) => `r${String(99 - i).padStart(3, "0")}`)
          )
        })
      )
    )
  })
}

describe("threat 50: the memory store's retention runs on its clock", () => {
  it.effect("a record is kept for maxAge of the store's clock, then removed with the next append", () =>
    Effect.gen(function* () {
      const store = TraceStore.makeMemory({ retention: { maxAge: "7 days" } })
      yield* TestClock.setTime(100 * day)
      yield* store.append([record("old", 100 * day)])
      yield* TestClock.adjust("6 days")
      yield* store.append([record("middle", 106 * day)])
      assert.isTrue(Option.isSome(yield* store.get("old")))
      yield* TestClock.adjust("2 days")
      yield* store.append([record("new", 108 * day)])
      assert.isTrue(Option.isNone(yield* store.get("old")))
      assert.deepStrictEqual(
        (yield* store.recent({ limit: 10 })).map((r) => r.id),
        ["new", "middle"]
      )
    })
  )

  it.effect("by size, the oldest records go first whatever their payloads", () =>
    Effect.gen(function* () {
      const store = TraceStore.makeMemory({ retention: { maxAge: Duration.infinity, maxBytes: 10_000 } })
      for (let i = 0; i < 20; i++) yield* store.append([record(`m${i}`, i, "z".repeat(1000))])
      const kept = (yield* store.recent({ limit: 100 })).map((r) => r.id)
      // About 1.2 KB each: the newest eight fit in 10,000 bytes.
      assert.deepStrictEqual(
        kept,
        Array.from({ length: 8 }, (_, i) => `m${19 - i}`)
      )
      assert.deepStrictEqual(yield* store.prune, { byAge: 0, bySize: 0 })
    })
  )
})
