import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { List } from "@ugent/tools"
import { Effect, Exit } from "effect"
import { watched } from "../loop.ts"
import { withWorkspace } from "../workspace/fixture.ts"

describe("file.list", () => {
  it.effect("lists one level: directories first, then files, each alphabetical", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("b.txt", "bb")
        fx.file("A.md", "a")
        fx.file("src/deep/x.ts", "x")
        fx.dir("docs")
        const out = yield* List.list.run({})
        assert.deepStrictEqual(
          out.entries.map((e) => e.name),
          ["docs", "src", "A.md", "b.txt"]
        )
        assert.strictEqual(out.path, ".")
        const b = out.entries.find((e) => e.name === "b.txt")!
        assert.deepStrictEqual([b.path, b.isDir, b.size, b.kind], ["b.txt", false, 2, "file"])
        assert.match(b.modified, /^\d{4}-/)
        const src = yield* List.list.run({ path: "src" })
        assert.deepStrictEqual(
          src.entries.map((e) => [e.path, e.isDir]),
          [["src/deep", true]]
        )
      })
    )
  )

  it.effect("hidden entries are skipped unless asked for; blocked ones are never listed", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file(".prettierrc", "{}")
        fx.file(".env", "KEY=1")
        fx.file("visible.txt", "v")
        fx.dir(".git")
        const plain = yield* List.list.run({})
        assert.deepStrictEqual(
          plain.entries.map((e) => e.name),
          ["visible.txt"]
        )
        const all = yield* List.list.run({ hidden: true, ignored: true })
        assert.deepStrictEqual(
          all.entries.map((e) => e.name),
          [".prettierrc", "visible.txt"]
        )
      })
    )
  )

  it.effect("default-ignored names are skipped unless asked for", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (const d of ["node_modules", "dist", "build", "src"]) fx.dir(d)
        const plain = yield* List.list.run({})
        assert.deepStrictEqual(
          plain.entries.map((e) => e.name),
          ["src"]
        )
        const all = yield* List.list.run({ ignored: true })
        assert.deepStrictEqual(
          all.entries.map((e) => e.name),
          ["build", "dist", "node_modules", "src"]
        )
      })
    )
  )

  it.effect("stops at 1,000 entries and says so", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (let i = 0; i < 1005; i++) fx.file(`f${String(i).padStart(4, "0")}.txt`, "")
        const out = yield* List.list.run({})
        assert.strictEqual(out.entries.length, 1000)
        assert.strictEqual(out.total, 1005)
        assert.isTrue(out.truncated)
        assert.strictEqual(out.entries[999]!.name, "f0999.txt")
      })
    )
  )

  it.effect("threat 8: limit 0 is honored, not taken as the default", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "")
        const out = yield* List.list.run({ limit: 0 })
        assert.deepStrictEqual(out.entries, [])
        assert.strictEqual(out.total, 1)
        assert.isTrue(out.truncated)
      })
    )
  )

  it.effect("a link leading outside is reported as such and not followed; one inside shows its target", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.link(join(fx.outside, "data.txt"), "out-file")
        fx.link(fx.outside, "out-dir")
        fx.file("real.txt", "12345")
        fx.link("real.txt", "in-link")
        const out = yield* List.list.run({})
        const byName = Object.fromEntries(out.entries.map((e) => [e.name, e]))
        assert.strictEqual(byName["out-file"]!.link, "outside")
        assert.strictEqual(byName["out-dir"]!.link, "outside")
        assert.isFalse(byName["out-dir"]!.isDir)
        assert.strictEqual(byName["in-link"]!.link, "inside")
        assert.strictEqual(byName["in-link"]!.size, 5)
        const e = yield* Effect.flip(List.list.run({ path: "out-dir" }))
        assert.strictEqual(e._tag, "OutsideWorkspace")
      })
    )
  )

  it.effect("a file is NotADirectory; outside paths and blocked directories are refused", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", "")
        fx.dir(".git/objects")
        assert.strictEqual((yield* Effect.flip(List.list.run({ path: "f.txt" })))._tag, "NotADirectory")
        assert.strictEqual((yield* Effect.flip(List.list.run({ path: ".." })))._tag, "OutsideWorkspace")
        assert.strictEqual((yield* Effect.flip(List.list.run({ path: fx.evil })))._tag, "OutsideWorkspace")
        assert.strictEqual((yield* Effect.flip(List.list.run({ path: ".git" })))._tag, "BlockedPath")
        assert.strictEqual((yield* Effect.flip(List.list.run({ path: "missing" })))._tag, "NotFound")
      })
    )
  )

  it.live(
    "a directory of 100,000 entries is listed a page at a time, never holding the event loop for long",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const dir = fx.dir("many")
          for (let i = 0; i < 100_000; i++) writeFileSync(join(dir, `f${String(i).padStart(6, "0")}.txt`), "")
          fx.dir("many/zz-last-dir")
          const call = yield* watched(List.list.run({ path: "many" }))
          // It used to read and stat every entry in one go: 1.7 s with nothing else running.
          assert.isBelow(call.maxPause, 500, `the event loop was held for ${Math.round(call.maxPause)} ms`)
          const out = Exit.isSuccess(call.exit) ? call.exit.value : assert.fail(String(call.exit))
          assert.strictEqual(out.total, 100_001)
          assert.isTrue(out.truncated)
          assert.deepStrictEqual(
            out.entries.slice(0, 3).map((e) => e.name),
            ["zz-last-dir", "f000000.txt", "f000001.txt"]
          )
          assert.strictEqual(out.entries.length, 1000)
          assert.strictEqual(out.entries[999]!.name, "f000998.txt")
          assert.strictEqual(out.entries[1]!.size, 0)
        })
      ),
    { timeout: 120_000 }
  )
})
