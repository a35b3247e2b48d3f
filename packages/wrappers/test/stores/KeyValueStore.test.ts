/**
 * `KeyValueStore.layerSql` of `effect/persistence` on the SQL clients of the
 * stores: the SQLite client of this package (node:sqlite) and PostgreSQL. The
 * web tools keep their cache in a `KeyValueStore`; these checks are why a
 * host can give them `KeyValueStore.layerSql()` on the same database as the
 * other stores, with no store of our own.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Sqlite } from "@ugent/wrappers"
import { Effect, Layer, Redacted } from "effect"
import { KeyValueStore } from "effect/persistence"
import { Reactivity } from "effect/reactivity"
import { required, skipReason } from "./backends.ts"

const exercise = Effect.gen(function* () {
  const store = KeyValueStore.prefix(yield* KeyValueStore.KeyValueStore, "ugent/web.fetch/")
  const large = `${Date.now()}\n${"é".repeat(3_000_000)}`
  yield* store.set("a", "first")
  yield* store.set("a", "second")
  yield* store.set("b", large)
  yield* store.set("c_%", "odd key")
  expect(yield* store.get("a")).toBe("second")
  expect(yield* store.get("b")).toBe(large)
  expect(yield* store.get("missing")).toBeUndefined()
  expect([...(yield* store.keys)].sort()).toEqual(["a", "b", "c_%"])
  yield* store.remove("a")
  expect(yield* store.has("a")).toBe(false)
  yield* store.clear
  expect(yield* store.size).toBe(0)
})

describe("KeyValueStore.layerSql on the stores' SQL clients", () => {
  it.effect("SQLite (node:sqlite client): upsert, large values, odd keys, prefixes", () =>
    Effect.acquireUseRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "ugent-kv-"))),
      (dir) =>
        exercise.pipe(
          Effect.provide(
            KeyValueStore.layerSql({ table: "ugent_kv" }).pipe(
              Layer.provide(Sqlite.layer({ filename: join(dir, "ugent.db") })),
              Layer.provide(Reactivity.layer)
            )
          )
        ),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
  )

  const pgSkip = skipReason("UGENT_PG_URL")
  it.effect.skipIf(pgSkip !== undefined)(`PostgreSQL: the same${pgSkip === undefined ? "" : ` (${pgSkip})`}`, () =>
    Effect.gen(function* () {
      const url = Redacted.make(required("UGENT_PG_URL"))
      const schema = `ugent_kv_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
      const admin = PgClient.layer({ url })
      yield* Effect.acquireUseRelease(
        PgClient.PgClient.use((sql) => sql`CREATE SCHEMA ${sql(schema)}`).pipe(Effect.provide(admin)),
        () =>
          exercise.pipe(
            Effect.provide(
              KeyValueStore.layerSql({ table: "ugent_kv" }).pipe(
                Layer.provide(PgClient.layer({ url, startupParameters: { search_path: schema } }))
              )
            )
          ),
        () =>
          PgClient.PgClient.use((sql) => sql`DROP SCHEMA ${sql(schema)} CASCADE`).pipe(
            Effect.provide(admin),
            Effect.orDie
          )
      )
    })
  )
})
