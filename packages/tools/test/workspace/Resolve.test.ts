import { linkSync, readFileSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ReadProof } from "@ugent/core"
import { Workspace } from "@ugent/tools"
import { Effect, Schema } from "effect"
import { fixture, OUTSIDE_SECRET, withWorkspace } from "./fixture.ts"

const failure = (path: string, expect: "file" | "directory" | "any" = "any") =>
  Effect.flip(Workspace.resolve(path, { expect }))

const readText = (path: string) =>
  Workspace.readFile(path).pipe(Effect.map((f) => Buffer.from(f.bytes).toString("utf8")))

describe("Workspace", () => {
  describe("resolve", () => {
    it.effect("resolves a relative path against the root", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("src/a.ts", "x")
          const r = yield* Workspace.resolve("src/a.ts")
          assert.strictEqual(r.real, fx.at("src/a.ts"))
          assert.strictEqual(r.relative, "src/a.ts")
          assert.strictEqual(r.kind, "file")
        })
      )
    )

    it.effect("accepts an absolute path inside the root", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("a.txt", "x")
          const r = yield* Workspace.resolve(fx.at("a.txt"))
          assert.strictEqual(r.relative, "a.txt")
        })
      )
    )

    it.effect("the root itself is '.'", () =>
      withWorkspace(() =>
        Effect.gen(function* () {
          const r = yield* Workspace.resolve(".", { expect: "directory" })
          assert.strictEqual(r.relative, ".")
          assert.strictEqual(r.kind, "directory")
        })
      )
    )

    it.effect("threat 1 (prefix bypass): a sibling with the root as prefix is outside", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const e = yield* failure(join(fx.evil, "loot.txt"))
          assert.strictEqual(e._tag, "OutsideWorkspace")
          const e2 = yield* failure(fx.evil)
          assert.strictEqual(e2._tag, "OutsideWorkspace")
          const e3 = yield* failure("../ws_evil/loot.txt")
          assert.strictEqual(e3._tag, "OutsideWorkspace")
          assert.isTrue(Workspace.isInside("/srv/app", "/srv/app"))
          assert.isFalse(Workspace.isInside("/srv/app", "/srv/app_evil"))
          assert.isFalse(Workspace.isInside("/srv/app", "/srv/ap"))
          assert.isFalse(Workspace.isInside("/srv/app", "/srv"))
        })
      )
    )

    it.prop(
      "containment is decided by whole segments, however the paths are spelled",
      {
        root: Schema.Array(Schema.Literals(["/", "a", "ab", "a_b", "b"])),
        rest: Schema.Array(Schema.Literals(["/", "a", "ab", "b", "_"]))
      },
      ({ root, rest }) => {
        const segments = (p: string) => p.split("/").filter((s) => s !== "")
        const r = `/${root.join("")}`
        const c = `/${root.join("")}${rest.join("")}`
        const rs = segments(r)
        const cs = segments(c)
        const inside = cs.length >= rs.length && rs.every((s, i) => cs[i] === s)
        assert.strictEqual(Workspace.isInside(r, c), inside, `${r} ⊇ ${c}`)
      },
      { arbitrary: { runs: 2000 } }
    )

    it.effect("'..' in every position never leaves the root", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("a/b/c.txt", "c")
          const outside = [
            "..",
            "../",
            "../outside/data.txt",
            "a/../../outside/data.txt",
            "a/b/../../../outside/data.txt",
            "./../outside/data.txt",
            "a/./../.././outside/data.txt",
            `${fx.root}/../outside/data.txt`,
            `${fx.root}/a/../../outside/data.txt`
          ]
          for (const p of outside) {
            const e = yield* failure(p)
            assert.strictEqual(e._tag, "OutsideWorkspace", p)
          }
          const inside = ["a/../a/b/c.txt", "a/b/../b/c.txt", "./a/b/c.txt", "a//b///c.txt", "a/b/c.txt/../c.txt"]
          for (const p of inside) {
            const r = yield* Workspace.resolve(p)
            assert.strictEqual(r.relative, "a/b/c.txt", p)
          }
        })
      )
    )

    it.effect("encoded separators and backslashes are literal names", () =>
      withWorkspace(() =>
        Effect.gen(function* () {
          for (const p of ["%2e%2e%2foutside%2fdata.txt", "..%2f..%2foutside", "..\\outside\\data.txt", "%2e%2e/x"]) {
            const e = yield* failure(p)
            // Each is a plain (missing) name inside the root, except "%2e%2e/x" whose first segment is literal too.
            assert.strictEqual(e._tag, "NotFound", p)
          }
        })
      )
    )

    it.effect("unicode look-alikes of '/' and '..' are literal names", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          // U+FF0F full-width solidus, U+2024 one dot leader, U+2215 division slash.
          const names = ["\u2024\u2024\uff0foutside\uff0fdata.txt", "\u2024\u2024", "..\u2215outside\u2215data.txt"]
          for (const name of names) {
            const e = yield* failure(name)
            assert.strictEqual(e._tag, "NotFound", name)
          }
          fx.file("\u2024\u2024\uff0fx", "look-alike")
          assert.strictEqual(yield* readText("\u2024\u2024\uff0fx"), "look-alike")
          const r = yield* Workspace.resolve("\u2024\u2024\uff0fx")
          assert.strictEqual(r.real, join(fx.root, "\u2024\u2024\uff0fx"))
        })
      )
    )

    it.effect(
      "threat 2 (symlink escape): a link inside pointing outside is refused, never falling back to its parent",
      () =>
        withWorkspace((fx) =>
          Effect.gen(function* () {
            fx.link(join(fx.outside, "data.txt"), "escape.txt")
            fx.link(fx.outside, "outdir")
            fx.link("../outside/data.txt", "relative-escape.txt")
            for (const p of ["escape.txt", "outdir", "outdir/data.txt", "relative-escape.txt"]) {
              const e = yield* failure(p)
              assert.strictEqual(e._tag, "OutsideWorkspace", p)
              const r = yield* Effect.flip(Workspace.readFile(p))
              assert.strictEqual(r._tag, "OutsideWorkspace", p)
            }
          })
        )
    )

    it.effect("a link to a file inside the root resolves to its target", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("real/data.txt", "data")
          fx.link("real/data.txt", "alias.txt")
          fx.link("real", "alias-dir")
          const r = yield* Workspace.resolve("alias.txt")
          assert.strictEqual(r.real, fx.at("real/data.txt"))
          assert.strictEqual(yield* readText("alias-dir/data.txt"), "data")
        })
      )
    )

    it.effect("a link through an outside directory back inside is judged by its final target", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("in.txt", "in")
          symlinkSync(fx.at("in.txt"), join(fx.outside, "back"))
          fx.link(join(fx.outside, "back"), "roundtrip.txt")
          assert.strictEqual(yield* readText("roundtrip.txt"), "in")
        })
      )
    )

    it.effect("a symlink loop is an InvalidPath", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.link("loop-b", "loop-a")
          fx.link("loop-a", "loop-b")
          fx.link("self", "self")
          for (const p of ["loop-a", "self", "loop-a/x"]) {
            const e = yield* failure(p)
            assert.strictEqual(e._tag, "InvalidPath", p)
            assert.strictEqual((e as Workspace.InvalidPath).reason, "symlink-loop")
          }
        })
      )
    )

    it.effect("threat 3 (dangling symlink): a link to a missing file is refused, for reading and for writing", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.link(join(fx.outside, "not-yet.txt"), "dangling.txt")
          fx.link(join(fx.outside, "no-dir"), "dangling-dir")
          const e = yield* failure("dangling.txt")
          assert.strictEqual(e._tag, "InvalidPath")
          const w = yield* Effect.flip(Workspace.resolveForWrite("dangling.txt"))
          assert.strictEqual(w._tag, "InvalidPath")
          const w2 = yield* Effect.flip(
            Workspace.writeFile("dangling.txt", new TextEncoder().encode("x"), { mode: "create" })
          )
          assert.strictEqual(w2._tag, "InvalidPath")
          const w3 = yield* Effect.flip(
            Workspace.writeFile("dangling-dir/f.txt", new TextEncoder().encode("x"), { mode: "create" })
          )
          assert.strictEqual(w3._tag, "InvalidPath")
          // Nothing was created outside.
          assert.throws(() => readFileSync(join(fx.outside, "not-yet.txt")))
          assert.throws(() => readFileSync(join(fx.outside, "no-dir", "f.txt")))
        })
      )
    )

    it.effect("threat 3: a new file under a linked directory that leads outside is refused (parent)", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.link(fx.outside, "out")
          const e = yield* Effect.flip(Workspace.resolveForWrite("out/new.txt"))
          assert.strictEqual(e._tag, "OutsideWorkspace")
          assert.strictEqual((e as Workspace.OutsideWorkspace).reason, "parent")
          const e2 = yield* Effect.flip(Workspace.resolveForWrite("out/deeper/new.txt"))
          assert.strictEqual(e2._tag, "OutsideWorkspace")
        })
      )
    )

    it.effect("threat 10 (NUL bytes): a path with a NUL byte is refused before any lookup", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("a.txt", "x")
          for (const p of ["a.txt\0", "\0", "a\0/../a.txt", "a.txt\0.png"]) {
            const e = yield* failure(p)
            assert.strictEqual(e._tag, "InvalidPath")
            assert.strictEqual((e as Workspace.InvalidPath).reason, "nul-byte")
            assert.include(e.message, "\\x00")
            const w = yield* Effect.flip(Workspace.resolveForWrite(p))
            assert.strictEqual(w._tag, "InvalidPath")
          }
        })
      )
    )

    it.effect("an empty path is refused with a message saying what to give", () =>
      withWorkspace(() =>
        Effect.gen(function* () {
          const e = yield* failure("")
          assert.strictEqual(e._tag, "InvalidPath")
          assert.include(e.message, '"." for the root')
        })
      )
    )

    it.effect("a missing file is NotFound with a message that says what to do", () =>
      withWorkspace(() =>
        Effect.gen(function* () {
          const e = yield* failure("DEVLOG.md", "file")
          assert.strictEqual(e._tag, "NotFound")
          assert.strictEqual(e.message, "File not found: DEVLOG.md. Check the path with file.list or file.glob.")
          assert.notInclude(e.message, "ENOENT")
        })
      )
    )

    it.effect("expect refuses the wrong kind", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("f.txt", "x")
          fx.dir("d")
          assert.strictEqual((yield* failure("d", "file"))._tag, "NotAFile")
          assert.strictEqual((yield* failure("f.txt", "directory"))._tag, "NotADirectory")
          assert.strictEqual((yield* failure("f.txt/x", "file"))._tag, "NotFound")
        })
      )
    )

    it.effect(
      "hard link: a hard link inside the root to an outside inode reads as an ordinary file; a write breaks the link and leaves the outside inode unchanged",
      () =>
        withWorkspace((fx) =>
          Effect.gen(function* () {
            linkSync(join(fx.outside, "data.txt"), fx.at("hard.txt"))
            // Indistinguishable by path: documented in Workspace.ts.
            assert.strictEqual(yield* readText("hard.txt"), OUTSIDE_SECRET)
            const ws = yield* Workspace.Workspace
            const current = yield* ws.readFile("hard.txt")
            yield* ws.writeFile("hard.txt", new TextEncoder().encode("replaced\n"), {
              mode: "replace",
              expectedHash: ReadProof.hash(current.bytes)
            })
            assert.strictEqual(readFileSync(join(fx.outside, "data.txt"), "utf8"), OUTSIDE_SECRET)
            assert.strictEqual(readFileSync(fx.at("hard.txt"), "utf8"), "replaced\n")
          })
        )
    )

    it.effect("an absolute path through the configured (non-canonical) root is accepted", () =>
      Effect.gen(function* () {
        const fx = yield* fixture
        fx.file("a.txt", "via-link")
        symlinkSync(fx.root, join(fx.outside, "root-link"))
        const configured = join(fx.outside, "root-link")
        const text = yield* Workspace.readFile(join(configured, "a.txt")).pipe(
          Effect.map((f) => Buffer.from(f.bytes).toString("utf8")),
          Effect.provide(Workspace.layer({ root: configured }))
        )
        assert.strictEqual(text, "via-link")
        const ws = yield* Workspace.make({ root: configured })
        assert.strictEqual(ws.root, fx.root)
      })
    )

    it.effect("a root that does not exist fails the layer with NotFound", () =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(Workspace.make({ root: "/nonexistent/ugent/root" }))
        assert.strictEqual(e._tag, "NotFound")
      })
    )
  })

  describe("resolveEntry and readEntry (a path as git sees it)", () => {
    const entry = (path: string) => Workspace.Workspace.use((ws) => ws.resolveEntry(path))
    const read = (path: string) =>
      Workspace.Workspace.use((ws) => Effect.flatMap(ws.resolveEntry(path), (e) => ws.readEntry(e))).pipe(
        Effect.map((b) => Buffer.from(b).toString("utf8"))
      )

    it.effect("a link among the directories must lead inside; the last name is not followed", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("real/a.txt", "inside\n")
          fx.link("real", "alias")
          fx.link(fx.outside, "out")
          fx.link(join(fx.outside, "data.txt"), "final.txt")
          assert.strictEqual((yield* entry("alias/a.txt")).real, fx.at("real/a.txt"))
          assert.strictEqual(yield* read("alias/a.txt"), "inside\n")
          for (const p of ["out/data.txt", "out/missing/deeper.txt"]) {
            const e = yield* Effect.flip(entry(p))
            assert.strictEqual(e._tag, "OutsideWorkspace", p)
          }
          const link = yield* entry("final.txt")
          assert.strictEqual(link.kind, "symlink")
          // A link is read as its own text, never followed.
          assert.strictEqual(yield* read("final.txt"), join(fx.outside, "data.txt"))
          assert.notInclude(yield* read("final.txt"), OUTSIDE_SECRET)
        })
      )
    )

    it.effect("a missing path is fine when its deepest existing directory is inside", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.dir("src")
          const e = yield* entry("src/gone/old.ts")
          assert.strictEqual(e.kind, "missing")
          assert.strictEqual(e.relative, "src/gone/old.ts")
          const nf = yield* Effect.flip(read("src/gone/old.ts"))
          assert.strictEqual(nf._tag, "NotFound")
          const outside = yield* Effect.flip(entry("../outside/data.txt"))
          assert.strictEqual(outside._tag, "OutsideWorkspace")
        })
      )
    )

    it.effect("blocked names resolve (git tools redact them), but their bytes are never read", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file(".env", "KEY=1\n")
          assert.strictEqual((yield* entry(".env")).kind, "file")
          const e = yield* Effect.flip(read(".env"))
          assert.strictEqual(e._tag, "BlockedPath")
        })
      )
    )
  })
})
