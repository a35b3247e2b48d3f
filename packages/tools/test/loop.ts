/**
 * A watch on the event loop during a call, for the tests of code that must
 * not hold it: how long the call took, and the longest stretch in which a
 * 5 ms timer could not run.
 */
import { Effect, type Exit } from "effect"

export interface Watched<A, E> {
  readonly exit: Exit.Exit<A, E>
  /** How long the call took. */
  readonly millis: number
  /** The longest the event loop went without running a timer during the call. */
  readonly maxPause: number
}

/** Runs `effect`, timing it and watching the event loop with a timer every 5 ms. */
export const watched = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Watched<A, E>, never, R> =>
  Effect.gen(function* () {
    let last = performance.now()
    let maxPause = 0
    const timer = setInterval(() => {
      const now = performance.now()
      maxPause = Math.max(maxPause, now - last)
      last = now
    }, 5)
    const start = performance.now()
    const exit = yield* Effect.exit(effect)
    const millis = performance.now() - start
    clearInterval(timer)
    maxPause = Math.max(maxPause, performance.now() - last)
    return { exit, millis, maxPause }
  })
