// Write-behind for the SQL stores: entries go to a buffer that one writer
// fiber drains in batches (each batch multi-row INSERTs, in one transaction
// when there are several), so a call pays a push, not a commit. `drain`
// writes what is pending now (readers call it first: read-your-writes); the
// scope's finalizer drains before the database closes, so nothing is lost on
// shutdown. A batch that fails goes back to the front of the buffer and the
// writer retries it with backoff. Past `maxPending`, and with `failClosed`
// while writes fail, a push drains first, so a caller meets the failure
// instead of filling memory. Written here, as effect/sql has no write-behind
// of its own.
import { Array as Arr, Context, Effect, Latch, Schedule, type Scope, Semaphore } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { StoreError } from "../../StoreError.ts"
import type { Inserter } from "./offThread.ts"

// How the write-behind batches (documented as `Stores.BatchOptions`).
export interface BatchOptions {
  /** Most records written by one transaction. Default 1000. */
  readonly batchSize?: number | undefined
  /** How long the writer waits for more records before writing a partial batch. Default 50 ms (a busy agent's calls then share one commit). */
  readonly lingerMillis?: number | undefined
  /** Pending records past which `append` writes the backlog itself. Default 50,000. */
  readonly maxPending?: number | undefined
}

export interface WriteBehind<A> {
  /** Queues entries; fails when the store is closed, or when writing is failing and a drain now fails too. */
  readonly push: (entries: ReadonlyArray<A>) => Effect.Effect<void, StoreError>
  /** Writes everything pending. */
  readonly drain: Effect.Effect<void, StoreError>
}

export interface Options<A> {
  readonly store: StoreError["store"]
  /** What a failed write was doing, for its `StoreError`. */
  readonly operation: string
  readonly batchSize: number
  readonly lingerMillis: number
  readonly maxPending: number
  /** Whether a push fails while writes fail (an audit trail), or only past `maxPending` (traces). */
  readonly failClosed: boolean
  /** Writes a batch; `closing` when the store's scope is ending (a writer thread is then not worth starting). */
  readonly write: (batch: ReadonlyArray<A>, closing: boolean) => Effect.Effect<unknown, SqlError.SqlError>
}

// 500 rows of up to 16 columns stay under SQLite's 32,766 and PostgreSQL's 65,535 parameters.
const rowsPerStatement = 500

/**
 * Where a SQL store's batches go instead of its own connection, when its
 * database provides it (a SQLite file's writer thread, see `offThread.ts`).
 */
export const OffThread = Context.Reference<Inserter | undefined>("ugent/wrappers/sql/OffThread", {
  defaultValue: () => undefined
})

/**
 * Inserts rows into `table` (an entry whose id is stored is ignored): through
 * the writer thread when given (started unless the store is closing), else
 * one statement per 500, in a transaction if several.
 */
export const insertAll = <A>(
  sql: SqlClient.SqlClient,
  table: string,
  entries: ReadonlyArray<A>,
  toRow: (entry: A) => Record<string, unknown>,
  offThread?: { readonly inserter: Inserter | undefined; readonly closing: boolean } | undefined
): Effect.Effect<unknown, SqlError.SqlError> => {
  const rows = entries.map(toRow)
  const handed = offThread?.inserter?.insert(table, rows, !offThread.closing)
  if (handed !== undefined) return handed
  const statements: Array<Effect.Effect<unknown, SqlError.SqlError>> = []
  for (let i = 0; i < rows.length; i += rowsPerStatement) {
    const part = rows.slice(i, i + rowsPerStatement)
    if (!Arr.isReadonlyArrayNonEmpty(part)) continue
    statements.push(sql`INSERT INTO ${sql(table)} ${sql.insert(part)} ON CONFLICT (id) DO NOTHING`)
  }
  if (statements.length === 0) return Effect.void
  return statements.length === 1
    ? statements[0]!
    : sql.withTransaction(Effect.forEach(statements, (s) => s, { discard: true }))
}

export const make = <A>(options: Options<A>): Effect.Effect<WriteBehind<A>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { batchSize, lingerMillis, maxPending } = options
    const storeError = (cause: SqlError.SqlError) =>
      new StoreError({ store: options.store, operation: options.operation, detail: cause.message, cause })
    let buffer: Array<A> = []
    let closed = false
    let failing = false
    const writeLock = yield* Semaphore.make(1)
    const wake = yield* Latch.make(false)

    // Uninterruptible, so an interrupted drain never drops a batch it has taken.
    const drain = writeLock.withPermit(
      Effect.uninterruptible(
        Effect.gen(function* () {
          while (buffer.length > 0) {
            const batch = buffer.slice(0, batchSize)
            buffer = buffer.slice(batch.length)
            yield* options.write(batch, closed).pipe(
              Effect.tapError(() =>
                Effect.sync(() => {
                  buffer = batch.concat(buffer)
                  failing = true
                })
              ),
              Effect.mapError(storeError)
            )
          }
          failing = false
        })
      )
    )

    const retried = drain.pipe(
      Effect.tapError((e) => Effect.logWarning(`${options.store} store: writing failed; retrying`, e)),
      Effect.retry(Schedule.min([Schedule.exponential("50 millis"), Schedule.spaced("5 seconds")]))
    )
    const writer = Effect.gen(function* () {
      yield* wake.await
      wake.closeUnsafe()
      if (lingerMillis > 0 && buffer.length < batchSize) yield* Effect.sleep(lingerMillis)
      yield* retried
    }).pipe(Effect.forever)
    yield* Effect.forkScoped(writer)
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return drain
      }).pipe(
        Effect.catch((e) =>
          Effect.logError(`${options.store} store: ${buffer.length} entries could not be written at shutdown`, e)
        )
      )
    )

    const closedError = new StoreError({
      store: options.store,
      operation: options.operation,
      detail: "the store has been closed"
    })
    const enqueue = (entries: ReadonlyArray<A>) =>
      Effect.sync(() => {
        for (const entry of entries) buffer.push(entry)
        wake.openUnsafe()
      })

    return {
      push: (entries) =>
        Effect.suspend(() => {
          if (closed) return Effect.fail(closedError)
          if (entries.length === 0) return Effect.void
          // Past maxPending, or while writes fail when failing closed, the caller writes the backlog itself.
          if ((options.failClosed && failing) || buffer.length + entries.length > maxPending) {
            return Effect.andThen(drain, enqueue(entries))
          }
          return enqueue(entries)
        }),
      drain
    }
  })
