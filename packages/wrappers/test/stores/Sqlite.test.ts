import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Sqlite } from "@ugent/wrappers"
import { Context, Effect, Exit, Layer, Stream } from "effect"
import { Migrator, SqlClient } from "effect/sql"

const inMemory = Sqlite.layer({ filename: ":memory:" })

const withTempDir = <A, E, R>(f: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "ugent-sqlite-"))),
    f,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const withTable = <A, E>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, n REAL, flag INTEGER, data BLOB)`
    return yield* f(sql)
  }).pipe(Effect.provide(inMemory))

describe("Sqlite", () => {
  describe("statements", () => {
    it.effect("binds parameters of every kind and reads them back", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          const blob = new Uint8Array([1, 2, 255])
          yield* sql`INSERT INTO items (name, n, flag, data) VALUES (${"it's"}, ${1.5}, ${true}, ${blob})`
          yield* sql`INSERT INTO items (name, n, flag, data) VALUES (${"none"}, ${null}, ${false}, ${undefined})`
          const rows = yield* sql<{ name: string; n: number | null; flag: number; data: Uint8Array | null }>`
            SELECT name, n, flag, data FROM items ORDER BY id`
          assert.deepStrictEqual(
            rows.map((r) => ({ ...r })),
            [
              { name: "it's", n: 1.5, flag: 1, data: blob },
              { name: "none", n: null, flag: 0, data: null }
            ]
          )
        })
      )
    )

    it.effect("inserts many rows with sql.insert and returns rows with RETURNING", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          const inserted = yield* sql<{ id: number; name: string }>`
            INSERT INTO items ${sql.insert([{ name: "a" }, { name: "b" }, { name: "c" }])} RETURNING id, name`
          assert.deepStrictEqual(
            inserted.map((r) => [r.id, r.name]),
            [
              [1, "a"],
              [2, "b"],
              [3, "c"]
            ]
          )
          const found = yield* sql<{ name: string }>`SELECT name FROM items WHERE ${sql.in("id", [1, 3])} ORDER BY id`
          assert.deepStrictEqual(
            found.map((r) => r.name),
            ["a", "c"]
          )
        })
      )
    )

    it.effect("reads rows as arrays of values, and as a stream", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          yield* sql`INSERT INTO items ${sql.insert([
            { name: "a", n: 1 },
            { name: "b", n: 2 }
          ])}`
          assert.deepStrictEqual(yield* sql`SELECT name, n FROM items ORDER BY id`.values, [
            ["a", 1],
            ["b", 2]
          ])
          const streamed = yield* Stream.runCollect(sql<{ name: string }>`SELECT name FROM items ORDER BY id`.stream)
          assert.deepStrictEqual(
            Array.from(streamed, (r) => r.name),
            ["a", "b"]
          )
        })
      )
    )

    it.effect("reports a unique violation as a typed SqlError naming the constraint", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          yield* sql`INSERT INTO items (name) VALUES (${"a"})`
          const error = yield* Effect.flip(sql`INSERT INTO items (name) VALUES (${"a"})`)
          assert.strictEqual(error._tag, "SqlError")
          assert.strictEqual(error.reason._tag, "UniqueViolation")
          assert.include(error.message, "UNIQUE constraint failed: items.name")
        })
      )
    )

    it.effect("reports a syntax error as a SqlError, not a defect", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          const error = yield* Effect.flip(sql`SELEKT 1`)
          assert.strictEqual(error._tag, "SqlError")
          assert.include(error.message, "syntax error")
        })
      )
    )
  })

  describe("transactions", () => {
    it.effect("commits on success", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          yield* sql.withTransaction(
            Effect.andThen(sql`INSERT INTO items (name) VALUES (${"a"})`, sql`INSERT INTO items (name) VALUES (${"b"})`)
          )
          assert.deepStrictEqual(yield* sql`SELECT count(*) AS c FROM items`.values, [[2]])
        })
      )
    )

    it.effect("rolls back on failure", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          const exit = yield* Effect.exit(
            sql.withTransaction(Effect.andThen(sql`INSERT INTO items (name) VALUES (${"a"})`, Effect.fail("boom")))
          )
          assert.isTrue(Exit.isFailure(exit))
          assert.deepStrictEqual(yield* sql`SELECT count(*) AS c FROM items`.values, [[0]])
        })
      )
    )

    it.effect("rolls back a nested transaction to its savepoint only", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO items (name) VALUES (${"outer"})`
              yield* Effect.exit(
                sql.withTransaction(
                  Effect.andThen(sql`INSERT INTO items (name) VALUES (${"inner"})`, Effect.fail("no"))
                )
              )
            })
          )
          assert.deepStrictEqual(yield* sql`SELECT name FROM items`.values, [["outer"]])
        })
      )
    )

    it.effect("rolls back when a statement inside fails, and the connection stays usable", () =>
      withTable((sql) =>
        Effect.gen(function* () {
          yield* sql`INSERT INTO items (name) VALUES (${"a"})`
          const exit = yield* Effect.exit(
            sql.withTransaction(
              Effect.andThen(
                sql`INSERT INTO items (name) VALUES (${"b"})`,
                sql`INSERT INTO items (name) VALUES (${"a"})`
              )
            )
          )
          assert.isTrue(Exit.isFailure(exit))
          yield* sql`INSERT INTO items (name) VALUES (${"c"})`
          assert.deepStrictEqual(yield* sql`SELECT name FROM items ORDER BY id`.values, [["a"], ["c"]])
        })
      )
    )

    it.effect("serializes concurrent transactions: no update is lost", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE counter (n INTEGER NOT NULL)`
        yield* sql`INSERT INTO counter VALUES (0)`
        // Read-modify-write with a yield in between: only isolation keeps it exact.
        const increment = sql.withTransaction(
          Effect.gen(function* () {
            const [row] = yield* sql<{ n: number }>`SELECT n FROM counter`
            yield* Effect.yieldNow
            yield* sql`UPDATE counter SET n = ${(row?.n ?? 0) + 1}`
          })
        )
        yield* Effect.all(
          Array.from({ length: 100 }, () => increment),
          { concurrency: "unbounded", discard: true }
        )
        assert.deepStrictEqual(yield* sql`SELECT n FROM counter`.values, [[100]])
      }).pipe(Effect.provide(inMemory))
    )
  })

  describe("files", () => {
    it.live("creates the directory, runs in WAL mode and keeps data across connections", () =>
      withTempDir((dir) =>
        Effect.gen(function* () {
          const layer = Sqlite.layer({ filename: join(dir, "nested", ".ugent", "ugent.db") })
          const mode = yield* Effect.provide(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              yield* sql`CREATE TABLE t (x TEXT)`
              yield* sql`INSERT INTO t VALUES (${"kept"})`
              return yield* sql<{ journal_mode: string }>`PRAGMA journal_mode`
            }),
            layer
          )
          assert.strictEqual(mode[0]?.journal_mode, "wal")
          const rows = yield* Effect.provide(
            SqlClient.SqlClient.use((sql) => sql`SELECT x FROM t`.values),
            layer
          )
          assert.deepStrictEqual(rows, [["kept"]])
        })
      )
    )

    it.live("clients on one file in one process take turns instead of waiting on each other's locks", () =>
      withTempDir((dir) =>
        Effect.gen(function* () {
          // A short busy timeout: a client blocked on the other's lock would fail fast.
          const filename = join(dir, "shared.db")
          const a = Context.get(
            yield* Layer.build(Sqlite.layer({ filename, busyTimeoutMillis: 50 })),
            SqlClient.SqlClient
          )
          const b = Context.get(
            yield* Layer.build(Sqlite.layer({ filename, busyTimeoutMillis: 50 })),
            SqlClient.SqlClient
          )
          yield* a`CREATE TABLE t (x INTEGER)`
          const slowTransaction = a.withTransaction(
            Effect.gen(function* () {
              yield* a`INSERT INTO t VALUES (1)`
              yield* Effect.sleep("200 millis")
              yield* a`INSERT INTO t VALUES (2)`
            })
          )
          const writes = Effect.forEach([3, 4, 5], (x) => b`INSERT INTO t VALUES (${x})`, { discard: true })
          yield* Effect.all([slowTransaction, Effect.delay(writes, "20 millis")], { concurrency: 2 })
          assert.deepStrictEqual(yield* b`SELECT x FROM t ORDER BY rowid`.values, [[1], [2], [3], [4], [5]])
        }).pipe(Effect.scoped)
      )
    )

    it.live("fails to open with a SqlError when the path cannot be a database", () =>
      withTempDir((dir) =>
        Effect.gen(function* () {
          const file = join(dir, "plain-file")
          writeFileSync(file, "not a directory")
          const exit = yield* Effect.exit(
            Effect.provide(
              SqlClient.SqlClient.use((sql) => sql`SELECT 1`),
              Sqlite.layer({ filename: join(file, "x.db") })
            )
          )
          assert.isTrue(Exit.isFailure(exit))
        })
      )
    )
  })

  describe("migrations", () => {
    it.effect("runs effect/sql migrations once", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const migrate = Migrator.make({})({
          loader: Migrator.fromRecord({
            "1_create": sql`CREATE TABLE m (x INTEGER)`.pipe(Effect.asVoid),
            "2_seed": sql`INSERT INTO m VALUES (1)`.pipe(Effect.asVoid)
          })
        })
        assert.deepStrictEqual(yield* migrate, [
          [1, "create"],
          [2, "seed"]
        ])
        assert.deepStrictEqual(yield* migrate, [])
        assert.deepStrictEqual(yield* sql`SELECT x FROM m`.values, [[1]])
      }).pipe(Effect.provide(inMemory))
    )
  })
})
