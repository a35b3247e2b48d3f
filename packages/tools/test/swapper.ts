/**
 * A race partner for the tests of threat 44: another process that swaps a
 * directory of the workspace, as fast as it can, between a real directory
 * (holding the files given) and a symbolic link to a directory outside the
 * workspace that the test made (a canary holding a marker). It runs until
 * the scope closes, and counts its swaps in a file, so a test can check the
 * race really ran.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"

export interface Swapper {
  /** How many swaps the partner made so far. */
  readonly swaps: () => number
}

/**
 * Swaps `target` between a directory holding `files` (name → content), made
 * afresh each time, and a link to `outside`. With `files` `"move"`, the
 * directory already at `target` is moved aside and back instead (for a
 * repository, which cannot be made afresh so fast).
 */
export const swapDirectory = (target: string, outside: string, files: Readonly<Record<string, string>> | "move") =>
  Effect.acquireRelease(
    Effect.sync(() => {
      // The count is kept outside the workspace, where no tool under test looks.
      const counter = join(tmpdir(), `ugent-swaps-${randomBytes(6).toString("hex")}`)
      const child = spawn(
        process.execPath,
        [
          "-e",
          `
const fs = require("fs")
const path = require("path")
const [target, outside, files, counter] = [process.argv[1], process.argv[2], JSON.parse(process.argv[3]), process.argv[4]]
const pause = new Int32Array(new SharedArrayBuffer(4))
for (let i = 0; ; i++) {
  const tmp = target + ".swap"
  try {
    fs.rmSync(tmp, { force: true, recursive: true })
    if (files === "move") {
      if (i % 2 === 0) {
        fs.renameSync(target, target + ".aside")
        fs.symlinkSync(outside, tmp)
        fs.renameSync(tmp, target)
      } else {
        fs.rmSync(target, { force: true })
        fs.renameSync(target + ".aside", target)
      }
    } else {
      if (i % 2 === 0) fs.symlinkSync(outside, tmp)
      else {
        fs.mkdirSync(tmp)
        for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(tmp, name), content)
      }
      fs.rmSync(target, { force: true, recursive: true })
      fs.renameSync(tmp, target)
    }
  } catch {}
  if (i % 64 === 0) fs.writeFileSync(counter, String(i))
  // Now and then a state lasts up to a millisecond, so that whole walks can land in either.
  if (Math.random() < 0.3) Atomics.wait(pause, 0, 0, Math.random())
}`,
          target,
          outside,
          JSON.stringify(files),
          counter
        ],
        { stdio: "ignore" }
      )
      return { child, counter }
    }),
    ({ child, counter }: { child: ChildProcess; counter: string }) =>
      Effect.sync(() => {
        child.kill("SIGKILL")
        rmSync(counter, { force: true })
      })
  ).pipe(
    Effect.map(
      ({ counter }): Swapper => ({
        swaps: () => {
          try {
            return Number(readFileSync(counter, "utf8"))
          } catch {
            return 0
          }
        }
      })
    ),
    // The race starts when the partner has swapped a few times (a loaded machine starts Node slowly).
    Effect.tap((swapper) =>
      Effect.gen(function* () {
        const start = Date.now()
        while (swapper.swaps() < 64 && Date.now() - start < 20_000) yield* Effect.sleep("10 millis")
      })
    )
  )

/**
 * Runs `round` at least `min` times, then until `enough()` says the race was
 * seen from both sides, but never past `maxMillis` (a failing `enough` then
 * fails the test's own assertions instead of hanging it).
 */
export const rounds = <E, R>(
  options: { readonly min: number; readonly maxMillis: number; readonly enough: () => boolean },
  round: (i: number) => Effect.Effect<void, E, R>
): Effect.Effect<number, E, R> =>
  Effect.gen(function* () {
    const start = Date.now()
    let i = 0
    while ((i < options.min || !options.enough()) && Date.now() - start < options.maxMillis) {
      yield* round(i)
      i++
    }
    return i
  })
