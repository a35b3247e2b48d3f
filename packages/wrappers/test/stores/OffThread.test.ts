/**
 * The SQL stores' batches into a SQLite file are written by a thread of
 * their own: a commit that waits for the disk or for another connection's
 * lock holds that thread, never the event loop the tool calls run on.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { assert, describe, it } from "@effect/vitest"
import { Stores, TraceStore } from "@ugent/wrappers"
import { Context, Effect, Exit, Layer } from "effect"
import * as OffThread from "../../src/internal/sql/offThread.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "ugent-offthread-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const record = (id: string): TraceStore.TraceRecord => ({
  id,
  rootId: id,
  path: "world.tools.file.read",
  input: { path: "a.txt" },
  output: { content: "1\thello" },
  status: "success",
  startedAt: 1,
  durationMillis: 0.5,
  alternatives: []
})

describe("SQLite stores write their batches off the event loop", () => {
  it.live("a flush waiting for another connection's lock leaves the event loop running, and completes", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "ugent.db")
      const context = yield* Layer.build(Stores.layerSqlite({ filename, lingerMillis: 0 }))
      const traces = Context.get(context, TraceStore.TraceStore)
      // Another connection (another process, in life) holds the write lock.
      const other = new DatabaseSync(filename)
      other.exec("BEGIN IMMEDIATE")
      let released = false
      // On the event loop: it can only run if the flush below does not hold the thread.
      setTimeout(() => {
        released = true
        other.exec("COMMIT")
        other.close()
      }, 200)
      yield* traces.append([record("t-1")])
      yield* traces.flush
      assert.isTrue(released, "the flush finished before the lock was released")
      const stored = yield* traces.get("t-1")
      assert.strictEqual(stored._tag === "Some" && stored.value.path, "world.tools.file.read")
    })
  )

  it.live("rows handed over before the scope closes are on disk after it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const filename = join(dir, "ugent.db")
      yield* Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(Stores.layerSqlite({ filename }))
          const traces = Context.get(context, TraceStore.TraceStore)
          yield* traces.append(Array.from({ length: 2500 }, (_, i) => record(`t-${String(i).padStart(5, "0")}`)))
        })
      )
      const db = new DatabaseSync(filename, { readOnly: true })
      const row = db.prepare("SELECT count(*) AS n FROM ugent_traces").get() as { n: number }
      db.close()
      assert.strictEqual(row.n, 2500)
    })
  )

  it.live("a store closing before its first batch writes it on its own connection: no thread is started for it", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const writer = yield* OffThread.make(join(dir, "ugent.db"), 100)
      // An empty batch is written at once and starts no thread either.
      const empty = writer.insert("ugent_traces", [], true)
      assert.isDefined(empty)
      yield* empty!
      assert.isUndefined(writer.insert("ugent_traces", [{ id: "x" }], false))
    })
  )

  it.live("a writer that cannot open its database fails the batch as a SqlError, then hands batches back", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      // A directory is no database: the thread fails to open it.
      const writer = yield* OffThread.make(dir, 100)
      const first = writer.insert("ugent_traces", [{ id: "x" }], true)
      assert.isDefined(first)
      const exit = yield* Effect.exit(first!)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.include(String(exit.cause), "SqlError")
      assert.isUndefined(writer.insert("ugent_traces", [{ id: "y" }], true))
    })
  )
})
