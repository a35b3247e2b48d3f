/**
 * Helpers for the tests of threat 45 (a FIFO where a tool, or a program it
 * runs, opens a file): planting FIFOs, and a releaser that unblocks whatever
 * waits on them after a delay (so a test of code that blocks fails instead
 * of hanging the runner).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { Effect } from "effect"

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
