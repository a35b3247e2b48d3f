import { assert, describe, it } from "@effect/vitest"
import { AuditStore, MemoryStore, TraceStore } from "@ugent/wrappers"
import { Effect, Layer, Option } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { backends, type Database } from "./backends.ts"

/**
 * The tables as the first version of the stores created them, with its
 * migration recorded: a database written before failures had kinds and
 * entries had owners.
 */
const firstVersion = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const real = sql.literal(sql.onDialectOrElse({ pg: () => "DOUBLE PRECISION", orElse: () => "REAL" }))
  yield* Migrator.make({})({
    table: "ugent_audit_migrations",
    loader: Migrator.fromRecord({
      "1_create_audit": sql`CREATE TABLE ugent_audit (
        id TEXT PRIMARY KEY, call_id TEXT NOT NULL, phase TEXT NOT NULL, at ${real} NOT NULL,
        observer_id TEXT NOT NULL, path TEXT NOT NULL, input_summary TEXT NOT NULL, status TEXT NOT NULL,
        duration_millis ${real}, error_tag TEXT, error_message TEXT, result_summary TEXT, estimated_tokens ${real}
      )`.pipe(Effect.asVoid)
    })
  })
  yield* Migrator.make({})({
    table: "ugent_memory_migrations",
    loader: Migrator.fromRecord({
      "1_create_memory": sql`CREATE TABLE ugent_memory (
        id TEXT PRIMARY KEY, tool TEXT NOT NULL, kind TEXT NOT NULL, summary TEXT NOT NULL, content TEXT NOT NULL,
        size INTEGER NOT NULL, lines INTEGER NOT NULL, created_at ${real} NOT NULL
      )`.pipe(Effect.asVoid)
    })
  })
  yield* sql`INSERT INTO ugent_audit ${sql.insert({
    id: "old/after",
    call_id: "old",
    phase: "after",
    at: 1,
    observer_id: "alice",
    path: "file.read",
    input_summary: "{}",
    status: "failure",
    duration_millis: 4,
    error_tag: "Forbidden",
    error_message: "no"
  })}`
  yield* sql`INSERT INTO ugent_memory ${sql.insert({
    id: "m-old",
    tool: "search.grep",
    kind: "text",
    summary: "old",
    content: "a\nb",
    size: 3,
    lines: 2,
    created_at: 1
  })}`
})

const upgraded = (db: Database) =>
  Effect.gen(function* () {
    yield* Effect.scoped(Layer.build(Layer.effectDiscard(firstVersion).pipe(Layer.provide(db.client!()))))
    return yield* Effect.gen(function* () {
      const audit = yield* AuditStore.AuditStore
      const memory = yield* MemoryStore.MemoryStore
      yield* audit.record({
        id: "new/after",
        callId: "new",
        phase: "after",
        at: 2,
        observerId: "alice",
        path: "file.read",
        inputSummary: "{}",
        status: "failure",
        durationMillis: 6,
        error: { tag: "Forbidden", message: "no", kind: "denied" }
      })
      yield* memory.put({ id: "m-new", tool: "search.grep", content: "c", summary: "new", owner: "alice" })
      return {
        entries: yield* audit.list({ limit: 10 }),
        analytics: yield* audit.analytics({}),
        old: yield* memory.info("m-old"),
        mine: yield* memory.list({ owner: "alice", limit: 10 }),
        unowned: yield* memory.list({ owner: null, limit: 10 })
      }
    }).pipe(Effect.provide(db.open()))
  })

for (const { backend, skip } of backends.filter((b) => b.backend.name !== "memory")) {
  describe.skipIf(skip !== undefined)(`SQL stores upgrade (${backend.name})${skip ? ` ${skip}` : ""}`, () => {
    it.live("a database of the first version gains the error kind and the owner, and keeps its rows", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const db = yield* backend.database
          const { entries, analytics, old, mine, unowned } = yield* upgraded(db)
          // The old entry comes back without a kind; it is a failure but not counted as a refusal.
          assert.deepStrictEqual(
            entries.map((e) => [e.id, e.error]),
            [
              ["new/after", { tag: "Forbidden", message: "no", kind: "denied" }],
              ["old/after", { tag: "Forbidden", message: "no" }]
            ]
          )
          assert.deepStrictEqual(analytics.totals, { calls: 2, successes: 0, failures: 2, refusals: 1 })
          assert.deepStrictEqual(analytics.refusals, [{ reason: "Forbidden", kind: "denied", count: 1 }])
          assert.isUndefined(old.owner)
          assert.deepStrictEqual(
            mine.map((e) => e.id),
            ["m-new"]
          )
          assert.deepStrictEqual(
            unowned.map((e) => e.id),
            ["m-old"]
          )
        })
      )
    )
  })
}

/** The trace table as the first version created it, with one row of a whole 85 KB output. */
const firstTraces = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const real = sql.literal(sql.onDialectOrElse({ pg: () => "DOUBLE PRECISION", orElse: () => "REAL" }))
  yield* Migrator.make({})({
    table: "ugent_trace_migrations",
    loader: Migrator.fromRecord({
      "1_create_traces": Effect.gen(function* () {
        yield* sql`CREATE TABLE ugent_traces (
          id TEXT PRIMARY KEY, parent_id TEXT, root_id TEXT NOT NULL, path TEXT NOT NULL, input TEXT NOT NULL,
          output TEXT, error TEXT, status TEXT NOT NULL, started_at ${real} NOT NULL, duration_millis ${real} NOT NULL,
          alternatives TEXT NOT NULL, observer_id TEXT, session_id TEXT
        )`
        yield* sql`CREATE INDEX ugent_traces_parent ON ugent_traces (parent_id, started_at, id)`
        yield* sql`CREATE INDEX ugent_traces_root ON ugent_traces (root_id, started_at, id)`
        yield* sql`CREATE INDEX ugent_traces_started ON ugent_traces (started_at, id)`
        yield* sql`CREATE INDEX ugent_traces_path ON ugent_traces (path, started_at, id)`
      })
    })
  })
  yield* sql`INSERT INTO ugent_traces ${sql.insert({
    id: "old",
    root_id: "old",
    path: "file.read",
    input: '{"path":"big.txt"}',
    output: JSON.stringify({ content: "x".repeat(85_000) }),
    status: "success",
    started_at: Date.now() - 1000,
    duration_millis: 2,
    alternatives: "[]"
  })}`
})

for (const { backend, skip } of backends.filter((b) => b.backend.name !== "memory")) {
  describe.skipIf(skip !== undefined)(`SQL trace store upgrade (${backend.name})${skip ? ` ${skip}` : ""}`, () => {
    it.live(
      "threat 50: a trace table of the first version keeps its rows, and its whole payloads count against the size bound",
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const db = yield* backend.database
            yield* Effect.scoped(Layer.build(Layer.effectDiscard(firstTraces).pipe(Layer.provide(db.client!()))))
            const kept = yield* TraceStore.TraceStore.use((s) => s.get("old")).pipe(Effect.provide(db.open()))
            assert.strictEqual((Option.getOrThrow(kept).output as { content: string }).content.length, 85_000)
            // Opened with a bound of 50 KB, the store removes the old 85 KB row when it opens.
            const bounded = yield* TraceStore.TraceStore.use((s) => s.get("old")).pipe(
              Effect.provide(db.open({ traces: { retention: { maxBytes: 50_000 } } }))
            )
            assert.isTrue(Option.isNone(bounded))
          })
        )
    )
  })
}
