/**
 * Helpers for the tests of threat 45 (a FIFO where a tool, or a program it
 * runs, opens a file): planting FIFOs, a releaser that unblocks whatever
 * waits on them after a delay (so a test of code that blocks fails instead
 * of hanging the runner), and a watch on the event loop during a call.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { Effect, type Exit } from "effect"

/** Makes a FIFO at `path`. */
export const mkfifo = (path: string): void => {
  execFileSync("mkfifo", [path])
}

/**
 * After `afterMillis`, another process opens each FIFO for writing (without
 * blocking: it succeeds only while a reader waits) and closes it at once, again
 * and again, until the scope closes: a reader blocked in `open` then reads an
 * end of file and goes on. Code that never blocks never meets the writer.
 */
export const releaser = (fifos: ReadonlyArray<string>, afterMillis: number) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      spawn(
        process.execPath,
        [
          "-e",
          `
const fs = require("fs")
const fifos = JSON.parse(process.argv[1])
setTimeout(() => setInterval(() => {
  for (const f of fifos) {
    try { fs.closeSync(fs.openSync(f, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)) } catch {}
  }
}, 20), Number(process.argv[2]))`,
          JSON.stringify(fifos),
          String(afterMillis)
        ],
        { stdio: "ignore" }
      )
    ),
    (child: ChildProcess) => Effect.sync(() => child.kill("SIGKILL"))
  )

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
