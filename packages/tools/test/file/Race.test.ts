import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Read, Write } from "@ugent/tools"
import { Effect } from "effect"
import { OUTSIDE_SECRET, withWorkspace } from "../workspace/fixture.ts"

/**
 * Starts another process that swaps `target` for ever: a regular file (or a
 * directory) inside, then a symbolic link to `outside`, as fast as it can.
 * Files are swapped atomically with rename; a directory is removed first
 * (rename cannot put a directory over a link). Attempts go on past the
 * planned count (up to ten times) until some succeed, so a loaded machine
 * cannot make a test pass without having exercised both states.
 */
const swapper = (target: string, outside: string, kind: "file" | "dir") =>
  Effect.acquireRelease(
    Effect.sync(() =>
      spawn(
        process.execPath,
        [
          "-e",
          `
const fs = require("fs")
const [target, outside, kind] = process.argv.slice(1)
const pause = new Int32Array(new SharedArrayBuffer(4))
for (let i = 0; ; i++) {
  const tmp = target + ".swap"
  try {
    fs.rmSync(tmp, { force: true, recursive: true })
    if (i % 2 === 0) fs.symlinkSync(outside, tmp)
    else if (kind === "dir") fs.mkdirSync(tmp)
    else fs.writeFileSync(tmp, "inside\\n")
    if (kind === "dir") fs.rmSync(target, { force: true, recursive: true })
    fs.renameSync(tmp, target)
  } catch {}
  // Now and then the regular state lasts up to a millisecond, so that whole read-then-write sequences can land too.
  if (i % 2 === 1 && Math.random() < 0.5) Atomics.wait(pause, 0, 0, Math.random())
}`,
          target,
          outside,
          kind
        ],
        { stdio: "ignore" }
      )
    ),
    (child: ChildProcess) => Effect.sync(() => child.kill("SIGKILL"))
  )

describe("file tools", () => {
  describe("threat 4 (check-then-use race)", () => {
    it.live("a path swapped between a file and a link to an outside file never yields an outside byte", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("target.txt", "inside\n")
          yield* swapper(fx.at("target.txt"), join(fx.outside, "data.txt"), "file")
          let ok = 0
          const refused: Record<string, number> = {}
          for (let i = 0; i < 400 || (ok === 0 && i < 4000); i++) {
            const r = yield* Effect.result(Read.read.run({ path: "target.txt" }))
            if (r._tag === "Success") {
              ok++
              assert.strictEqual(r.success.content, "1\tinside")
              assert.notInclude(r.success.content, "OUTSIDE")
            } else {
              refused[r.failure._tag] = (refused[r.failure._tag] ?? 0) + 1
            }
          }
          assert.isAbove(ok, 0, "some reads must hit the regular file, or the test proves nothing")
          assert.isAbove(Object.keys(refused).length, 0, "some reads must meet the link, or the test proves nothing")
          for (const tag of Object.keys(refused)) {
            assert.include(["OutsideWorkspace", "ConcurrentChange", "NotFound"], tag)
          }
        })
      )
    )

    it.live("writes to a path swapped between a file and a link to an outside file never touch the outside file", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("target.txt", "inside\n")
          yield* swapper(fx.at("target.txt"), join(fx.outside, "data.txt"), "file")
          let written = 0
          for (let i = 0; i < 300 || (written === 0 && i < 3000); i++) {
            const r = yield* Effect.result(Read.read.run({ path: "target.txt" }))
            if (r._tag === "Failure") continue
            const w = yield* Effect.result(
              Write.write.run({ path: "target.txt", content: "mine\n", proof: r.success.proof })
            )
            if (w._tag === "Success") written++
            assert.strictEqual(readFileSync(join(fx.outside, "data.txt"), "utf8"), OUTSIDE_SECRET)
          }
          assert.strictEqual(readFileSync(join(fx.outside, "data.txt"), "utf8"), OUTSIDE_SECRET)
          assert.isAbove(written, 0, "some writes must land, or the test proves nothing")
        })
      )
    )

    it.live("creates under a directory swapped with a link to an outside directory never land outside", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.dir("d")
          const before = readdirSync(fx.outside).sort()
          yield* swapper(fx.at("d"), fx.outside, "dir")
          let created = 0
          for (let i = 0; i < 300 || (created === 0 && i < 3000); i++) {
            const w = yield* Effect.result(Write.write.run({ path: `d/new-${i}.txt`, content: "planted\n" }))
            if (w._tag === "Success") created++
          }
          assert.deepStrictEqual(readdirSync(fx.outside).sort(), before)
          assert.isAbove(created, 0, "some creates must land inside, or the test proves nothing")
        })
      )
    )
  })
})
