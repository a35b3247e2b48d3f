/**
 * The temporary files of atomic writes whose writer died (kill -9 between
 * making the temporary file and renaming it) are swept by the next write in
 * their directory once they are stale.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, utimesSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Write } from "@ugent/tools"
import { Effect } from "effect"
import { forgetSweeps, staleAfterMillis } from "../../src/internal/workspace/sweep.ts"
import { OUTSIDE_SECRET, withWorkspace } from "./fixture.ts"

const temps = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".ugent-tmp"))

/** Sets a file's times to `millis` ago, as if its writer had died then. */
const age = (at: string, millis: number) => {
  const then = new Date(Date.now() - millis)
  utimesSync(at, then, then)
}

/** A process that writes big files through the library without end, killed with SIGKILL once a temporary file exists. */
const killedWriter = (root: string) =>
  Effect.promise(async () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const child = spawn(
        process.execPath,
        [
          "--conditions=@ugent/source",
          "--input-type=module",
          "-e",
          `
import { Changes, Trust } from "@ugent/core"
import { Workspace, Write } from "@ugent/tools"
import { Effect, Layer } from "effect"
const content = "x".repeat(32 << 20)
const layer = Layer.mergeAll(Workspace.layer({ root: process.argv[1] }), Changes.layer, Trust.grant(1))
for (let i = 0; ; i++) await Effect.runPromise(Write.write.run({ path: "big/" + i + ".txt", content }).pipe(Effect.provide(layer)))
`,
          root
        ],
        { stdio: "ignore", cwd: join(import.meta.dirname, "..", "..") }
      )
      const dir = join(root, "big")
      while (child.exitCode === null && !(existsSync(dir) && temps(dir).length > 0)) {
        await new Promise((r) => setTimeout(r, 1))
      }
      child.kill("SIGKILL")
      await new Promise((r) => child.once("exit", r))
      if (existsSync(dir) && temps(dir).length > 0) return dir
    }
    throw new Error("the writer was never caught holding a temporary file")
  })

describe("stale temporary files", () => {
  it.live(
    "after kill -9 of a writer, its .name.<hex>.ugent-tmp file is swept by the next write in that directory once stale",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const dir = yield* killedWriter(fx.root)
          const left = temps(dir)
          assert.isAbove(left.length, 0)
          // Young, it may still be some live writer's: kept.
          forgetSweeps()
          yield* Write.write.run({ path: "big/after-1.txt", content: "one\n" })
          assert.deepStrictEqual(temps(dir), left)
          // Stale: swept.
          for (const name of left) age(join(dir, name), staleAfterMillis + 60_000)
          forgetSweeps()
          yield* Write.write.run({ path: "big/after-2.txt", content: "two\n" })
          assert.deepStrictEqual(temps(dir), [])
          assert.strictEqual(readFileSync(join(dir, "after-2.txt"), "utf8"), "two\n")
        })
      ),
    60_000
  )

  it.effect(
    "the sweep removes only stale regular files named like our temporary files, in the written directory, never through a link",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const old = staleAfterMillis + 60_000
          fx.file("sub/.a.txt.0123456789ab.ugent-tmp", "stale\n")
          age(fx.at("sub/.a.txt.0123456789ab.ugent-tmp"), old)
          fx.file("sub/.b.txt.ba9876543210.ugent-tmp", "fresh\n")
          fx.file("sub/.c.txt.xyz.ugent-tmp", "not ours\n")
          age(fx.at("sub/.c.txt.xyz.ugent-tmp"), old)
          fx.file("sub/notes.ugent-tmp", "not ours\n")
          age(fx.at("sub/notes.ugent-tmp"), old)
          mkdirSync(fx.at("sub/.d.0123456789ab.ugent-tmp"))
          symlinkSync(join(fx.outside, "data.txt"), fx.at("sub/.e.txt.0123456789ab.ugent-tmp"))
          fx.file("other/.f.txt.0123456789ab.ugent-tmp", "stale elsewhere\n")
          age(fx.at("other/.f.txt.0123456789ab.ugent-tmp"), old)
          yield* Write.write.run({ path: "sub/new.txt", content: "new\n" })
          assert.deepStrictEqual(readdirSync(fx.at("sub")).sort(), [
            ".b.txt.ba9876543210.ugent-tmp",
            ".c.txt.xyz.ugent-tmp",
            ".d.0123456789ab.ugent-tmp",
            ".e.txt.0123456789ab.ugent-tmp",
            "new.txt",
            "notes.ugent-tmp"
          ])
          assert.strictEqual(readFileSync(join(fx.outside, "data.txt"), "utf8"), OUTSIDE_SECRET)
          assert.deepStrictEqual(temps(fx.at("other")), [".f.txt.0123456789ab.ugent-tmp"])
        })
      )
  )
})
