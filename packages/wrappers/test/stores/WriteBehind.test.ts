import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlError } from "effect/sql"
import * as WriteBehind from "../../src/internal/sql/writeBehind.ts"

/** A write-behind buffer over an array, whose writes fail while `down` is true. */
const setupWith = (failClosed: boolean) =>
  Effect.gen(function* () {
    const stored: Array<number> = []
    const state = { down: false, writes: 0, closing: [] as Array<boolean> }
    const pending = yield* WriteBehind.make<number>({
      store: "audit",
      operation: "record an entry",
      batchSize: 3,
      lingerMillis: 1,
      maxPending: 10,
      failClosed,
      write: (batch, closing) =>
        Effect.suspend(() => {
          state.writes++
          state.closing.push(closing)
          if (state.down) {
            return Effect.fail(
              new SqlError.SqlError({ reason: new SqlError.UnknownError({ cause: "disk full", message: "disk full" }) })
            )
          }
          stored.push(...batch)
          return Effect.void
        })
    })
    return { pending, stored, state }
  })
const setup = setupWith(true)

describe("WriteBehind", () => {
  it.live("writes in batches, in order, and a drain writes everything pending", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { pending, stored, state } = yield* setup
        yield* pending.push([1, 2, 3, 4, 5, 6, 7])
        yield* pending.drain
        assert.deepStrictEqual(stored, [1, 2, 3, 4, 5, 6, 7])
        assert.strictEqual(state.writes, 3)
        assert.deepStrictEqual(state.closing, [false, false, false])
      })
    )
  )

  it.live("fails closed while writes fail, keeps what failed, and recovers", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { pending, stored, state } = yield* setup
        state.down = true
        yield* pending.push([1])
        // The writer's first attempt fails; from then on a push drains first and meets the failure.
        while (state.writes === 0) yield* Effect.sleep("1 millis")
        const refused = yield* Effect.flip(pending.push([2]))
        assert.strictEqual(refused._tag, "StoreError")
        assert.match(refused.message, /disk full/)
        state.down = false
        yield* pending.push([3])
        yield* pending.drain
        assert.deepStrictEqual(stored, [1, 3])
      })
    )
  )

  it.live("not failing closed, a push while writes fail is queued, and written once they work", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { pending, stored, state } = yield* setupWith(false)
        state.down = true
        yield* pending.push([1])
        while (state.writes === 0) yield* Effect.sleep("1 millis")
        yield* pending.push([2])
        state.down = false
        yield* pending.drain
        assert.deepStrictEqual(stored, [1, 2])
      })
    )
  )

  it.live("past maxPending a push writes the backlog itself", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { pending, stored } = yield* setup
        yield* pending.push([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
        yield* pending.push([11])
        assert.deepStrictEqual(stored, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
      })
    )
  )

  it.live("the end of its scope writes what is pending, telling the writer it is closing; a push after it fails", () =>
    Effect.gen(function* () {
      const { pending, stored, state } = yield* Effect.scoped(Effect.tap(setup, ({ pending }) => pending.push([1, 2])))
      assert.deepStrictEqual(stored, [1, 2])
      assert.deepStrictEqual(state.closing, [true])
      const refused = yield* Effect.flip(pending.push([3]))
      assert.match(refused.message, /closed/)
    })
  )
})
