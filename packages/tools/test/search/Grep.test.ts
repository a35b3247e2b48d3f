/**
 * `search.grep`, one behaviour per test, on every engine available here
 * (both where `rg` is on PATH). Threats from threats.md: #31 catastrophic
 * backtracking, #10 NUL bytes, #8 zero taken for "not given", and the jail
 * (paths outside, links out, blocked names).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Grep } from "@ugent/tools"
import { Effect } from "effect"
import { engines, grep, grepFailure, rgNote, skipWithoutRg, workspace } from "./fixture.ts"

const files = (out: Grep.Output) => (out.mode === "files" ? out.files : assert.fail(`expected files, got ${out.mode}`))
const groups = (out: Grep.Output) =>
  out.mode === "content" ? out.matches : assert.fail(`expected content, got ${out.mode}`)
const counts = (out: Grep.Output) =>
  out.mode === "count" ? out.counts : assert.fail(`expected count, got ${out.mode}`)

for (const engine of engines) {
  describe(`search.grep (${engine} engine)`, () => {
    describe("patterns", () => {
      it.live("a catastrophic pattern, (a+)+$ on a line of 50,000 a's and a '!', finishes", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "long.txt": `${"a".repeat(50_000)}!\naaaa\n` })
          // A backtracking engine would need about 2^50000 steps; a linear one answers at once.
          const out = yield* grep(root, { pattern: "(a+)+$", outputMode: "count" }, engine).pipe(
            Effect.timeout("20 seconds")
          )
          assert.deepStrictEqual(counts(out), [{ path: "long.txt", count: 1 }])
        })
      )

      it.effect("a NUL byte in the pattern is a typed error", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "a\n" })
          const error = yield* grepFailure(root, { pattern: "a\0b" }, engine)
          assert.strictEqual(error._tag, "InvalidPattern")
          assert.strictEqual(error._tag === "InvalidPattern" && error.reason, "nul-byte")
        })
      )

      it.effect("an invalid regex is a typed error carrying the engine's message", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "a\n" })
          const error = yield* grepFailure(root, { pattern: "(unclosed" }, engine)
          assert.strictEqual(error._tag, "InvalidPattern")
          if (error._tag !== "InvalidPattern") return
          assert.strictEqual(error.reason, "syntax")
          assert.include(error.detail, "missing closing )")
          assert.include(error.message, "(unclosed")
        })
      )

      it.effect("a pattern starting with '-' is searched for, not read as an option", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "run --files now\n", "b.txt": "nothing\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "--files" }, engine)), ["a.txt"])
        })
      )

      it.effect("a pattern that can only match a line break is refused", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "a\nb\n" })
          const error = yield* grepFailure(root, { pattern: "a\\nb" }, engine)
          assert.strictEqual(error._tag === "InvalidPattern" && error.reason, "newline")
        })
      )

      it.effect("a pattern compiling to a huge program is refused", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "a\n" })
          const error = yield* grepFailure(root, { pattern: "a{1000}".repeat(10) }, engine)
          assert.strictEqual(error._tag === "InvalidPattern" && error.reason, "too-large")
        })
      )

      it.effect("matching ignores case unless caseSensitive is set", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "Hello\n", "b.txt": "hello\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "hello" }, engine)), ["a.txt", "b.txt"])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "hello", caseSensitive: true }, engine)), ["b.txt"])
        })
      )

      it.effect("\\w and \\b are ASCII, \\p{L} is Unicode", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "été\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "^\\w+$" }, engine)), [])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "^\\p{L}+$" }, engine)), ["a.txt"])
        })
      )

      it.effect("a match never spans lines, and \\r stays part of a CRLF line", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "end\r\nnext\r\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "end$" }, engine)), [])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "end\\r$" }, engine)), ["a.txt"])
        })
      )
    })

    describe("the workspace jail", () => {
      it.effect("a path outside the workspace is refused", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "x\n" })
          const error = yield* grepFailure(root, { pattern: "x", path: "../" }, engine)
          assert.strictEqual(error._tag, "OutsideWorkspace")
        })
      )

      it.effect("an absolute path outside the workspace is refused", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "x\n" })
          const error = yield* grepFailure(root, { pattern: "root", path: "/etc" }, engine)
          assert.strictEqual(error._tag, "OutsideWorkspace")
        })
      )

      it.effect("a path through a link to the outside is refused", () =>
        Effect.gen(function* () {
          const outside = mkdtempSync(join(tmpdir(), "ugent-grep-outside-"))
          writeFileSync(join(outside, "loot.txt"), "secret loot\n")
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(outside, { recursive: true, force: true })))
          const root = yield* workspace({ out: { link: outside } })
          const error = yield* grepFailure(root, { pattern: "loot", path: "out" }, engine)
          assert.strictEqual(error._tag, "OutsideWorkspace")
        })
      )

      it.effect("links met while walking are not followed", () =>
        Effect.gen(function* () {
          const outside = mkdtempSync(join(tmpdir(), "ugent-grep-outside-"))
          writeFileSync(join(outside, "loot.txt"), "secret loot\n")
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(outside, { recursive: true, force: true })))
          const root = yield* workspace({
            "a.txt": "loot at home\n",
            out: { link: outside },
            "loot-link.txt": { link: join(outside, "loot.txt") }
          })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "loot" }, engine)), ["a.txt"])
        })
      )

      it.effect("a NUL byte in the path is a typed error", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "x\n" })
          const error = yield* grepFailure(root, { pattern: "x", path: "a.txt\0" }, engine)
          assert.strictEqual(error._tag, "InvalidPath")
        })
      )

      it.effect("a blocked path is refused", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ ".env": "TOKEN=x\n" })
          const error = yield* grepFailure(root, { pattern: "TOKEN", path: ".env" }, engine)
          assert.strictEqual(error._tag, "BlockedPath")
        })
      )

      it.effect("blocked files are never searched, even when a glob selects them", () =>
        Effect.gen(function* () {
          const root = yield* workspace({
            ".env": "TOKEN=1\n",
            "config/.env.local": "TOKEN=2\n",
            ".ssh/a.txt": "TOKEN=3\n",
            id_rsa: "TOKEN=4\n",
            "app.txt": "TOKEN=5\n"
          })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "TOKEN" }, engine)), ["app.txt"])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "TOKEN", glob: "**" }, engine)), ["app.txt"])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "TOKEN", glob: ".env*" }, engine)), [])
        })
      )

      it.effect("default-ignored directories are skipped unless the search is inside one", () =>
        Effect.gen(function* () {
          const root = yield* workspace({
            "node_modules/p/i.js": "needle\n",
            "dist/o.js": "needle\n",
            "s.js": "needle\n"
          })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle" }, engine)), ["s.js"])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle", path: "node_modules" }, engine)), [
            "node_modules/p/i.js"
          ])
        })
      )

      it.effect("every returned path is relative to the workspace root", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "src/deep/a.ts": "needle\n" })
          const out = yield* grep(root, { pattern: "needle", path: `${root}/src`, outputMode: "content" }, engine)
          assert.deepStrictEqual(
            groups(out).map((g) => g.path),
            ["src/deep/a.ts"]
          )
        })
      )
    })

    describe("the documents' inputs: paths, filePattern, excludePatterns, column", () => {
      it.effect("paths searches each path in order, once, sharing maxMatches", () =>
        Effect.gen(function* () {
          const root = yield* workspace({
            "src/a.ts": "needle\n",
            "src/b.ts": "needle\nneedle\n",
            "lib/c.ts": "needle\n",
            "docs/d.md": "needle\n",
            "top.txt": "needle\n"
          })
          const out = yield* grep(root, { pattern: "needle", paths: ["src", "lib", "src/b.ts", "src"] }, engine)
          assert.deepStrictEqual(files(out), ["src/a.ts", "src/b.ts", "lib/c.ts"])
          assert.isFalse(out.truncated)
          const content = yield* grep(
            root,
            { pattern: "needle", paths: ["src", "src/b.ts"], outputMode: "content", context: 0 },
            engine
          )
          assert.deepStrictEqual(
            groups(content).map((g) => [g.path, g.matches.length]),
            [
              ["src/b.ts", 2],
              ["src/a.ts", 1]
            ]
          )
          // The limit runs over all paths: the third result ends the search, and says so.
          const cut = yield* grep(root, { pattern: "needle", paths: ["src", "lib", "docs"], maxMatches: 2 }, engine)
          assert.deepStrictEqual(files(cut), ["src/a.ts", "src/b.ts"])
          assert.isTrue(cut.truncated)
          const exact = yield* grep(root, { pattern: "needle", paths: ["lib", "docs"], maxMatches: 2 }, engine)
          assert.deepStrictEqual([files(exact), exact.truncated], [["lib/c.ts", "docs/d.md"], false])
        })
      )

      it.effect("threat: each of paths passes the jail as path does (outside, a link out, a blocked name)", () =>
        Effect.gen(function* () {
          const outside = mkdtempSync(join(tmpdir(), "ugent-grep-outside-"))
          writeFileSync(join(outside, "loot.txt"), "secret loot\n")
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(outside, { recursive: true, force: true })))
          const root = yield* workspace({ "a.txt": "loot at home\n", ".env": "loot=1\n", out: { link: outside } })
          for (const [paths, tag] of [
            [["a.txt", "../"], "OutsideWorkspace"],
            [["a.txt", outside], "OutsideWorkspace"],
            [["a.txt", "out"], "OutsideWorkspace"],
            [[".", ".env"], "BlockedPath"],
            [["a.txt", "a.txt\0"], "InvalidPath"]
          ] as const) {
            const error = yield* grepFailure(root, { pattern: "loot", paths: [...paths] }, engine)
            assert.strictEqual(error._tag, tag, JSON.stringify(paths))
          }
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "loot", paths: ["."] }, engine)), ["a.txt"])
          const both = yield* grepFailure(root, { pattern: "loot", path: ".", paths: ["a.txt"] }, engine)
          assert.strictEqual(both._tag, "InvalidInput")
        })
      )

      it.effect("filePattern selects files as glob does; excludePatterns leave paths out and win", () =>
        Effect.gen(function* () {
          const root = yield* workspace({
            "src/a.ts": "needle\n",
            "src/a.test.ts": "needle\n",
            "src/fixtures/f.ts": "needle\n",
            "src/b.js": "needle\n",
            "README.md": "needle\n"
          })
          const run = (input: Omit<Grep.Input, "pattern">) =>
            Effect.map(grep(root, { pattern: "needle", ...input }, engine), files)
          assert.deepStrictEqual(yield* run({ filePattern: "*.ts" }), [
            "src/a.test.ts",
            "src/a.ts",
            "src/fixtures/f.ts"
          ])
          assert.deepStrictEqual(yield* run({ filePattern: "*.ts", excludePatterns: ["*.test.ts", "fixtures"] }), [
            "src/a.ts"
          ])
          assert.deepStrictEqual(yield* run({ excludePatterns: ["src/**"] }), ["README.md"])
          assert.deepStrictEqual(yield* run({ glob: "src/*", excludePatterns: ["*.js"] }), [
            "src/a.test.ts",
            "src/a.ts"
          ])
          const twice = yield* grepFailure(root, { pattern: "x", glob: "*.ts", filePattern: "*.js" }, engine)
          assert.strictEqual(twice._tag, "InvalidInput")
          const negated = yield* grepFailure(root, { pattern: "x", excludePatterns: ["!*.ts"] }, engine)
          assert.strictEqual(negated._tag, "InvalidGlob")
          assert.include(negated.message, "drop the leading !")
          const broken = yield* grepFailure(root, { pattern: "x", excludePatterns: ["src/{a"] }, engine)
          assert.strictEqual(broken._tag, "InvalidGlob")
        })
      )

      it.effect("each match has the column where it starts, in characters of the whole line", () =>
        Effect.gen(function* () {
          const long = `${"x".repeat(3000)}needle`
          const root = yield* workspace({ "a.txt": `needle first\n  héllo 😀 needle\n${long}\nNEEDLE and needle\n` })
          const out = yield* grep(root, { pattern: "needle", outputMode: "content", context: 0 }, engine)
          assert.deepStrictEqual(
            groups(out)[0]!.matches.map((m) => [m.line, m.column]),
            [
              [1, 1],
              [2, 11],
              [3, 3001],
              [4, 1]
            ]
          )
          const sensitive = yield* grep(
            root,
            { pattern: "needle", outputMode: "content", context: 0, caseSensitive: true, paths: ["a.txt"] },
            engine
          )
          assert.strictEqual(groups(sensitive)[0]!.matches.at(-1)!.column, 12)
        })
      )
    })

    describe("which files", () => {
      it.effect(".gitignore rules apply, negations included, without a git repository", () =>
        Effect.gen(function* () {
          const root = yield* workspace({
            ".gitignore": "*.log\n!keep.log\n",
            "a.log": "needle\n",
            "keep.log": "needle\n",
            "sub/.gitignore": "*.txt\n",
            "sub/b.txt": "needle\n",
            "c.txt": "needle\n"
          })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle" }, engine)), ["c.txt", "keep.log"])
        })
      )

      it.effect(".ignore and .rgignore rules apply, .rgignore first", () =>
        Effect.gen(function* () {
          const root = yield* workspace({
            ".ignore": "*.md\n",
            ".rgignore": "!keep.md\n",
            "a.md": "needle\n",
            "keep.md": "needle\n"
          })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle" }, engine)), ["keep.md"])
        })
      )

      it.effect("hidden files and directories are skipped", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ ".a.txt": "needle\n", ".dir/b.txt": "needle\n", "c.txt": "needle\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle" }, engine)), ["c.txt"])
        })
      )

      it.effect("binary files are skipped", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.bin": Buffer.from("needle\0\n"), "b.txt": "needle\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle" }, engine)), ["b.txt"])
        })
      )

      it.effect("a glob selects paths, and a leading ! excludes", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.ts": "needle\n", "b.md": "needle\n", "src/c.ts": "needle\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle", glob: "*.ts" }, engine)), [
            "a.ts",
            "src/c.ts"
          ])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle", glob: "!*.ts" }, engine)), ["b.md"])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle", glob: "src/**" }, engine)), ["src/c.ts"])
        })
      )

      it.effect("a type selects files by name", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.ts": "needle\n", "b.tsx": "needle\n", "c.md": "needle\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle", type: "ts" }, engine)), ["a.ts", "b.tsx"])
        })
      )

      it.effect("an unknown type is a typed error listing the known ones", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.ts": "x\n" })
          const error = yield* grepFailure(root, { pattern: "x", type: "typescript" }, engine)
          assert.strictEqual(error._tag, "UnknownFileType")
          assert.include(error.message, "ts")
        })
      )

      it.effect("an invalid glob is a typed error", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.ts": "x\n" })
          const error = yield* grepFailure(root, { pattern: "x", glob: "*.{ts" }, engine)
          assert.strictEqual(error._tag, "InvalidGlob")
        })
      )

      it.effect("a file path searches that one file, hidden or ignored", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ ".gitignore": "*.log\n", "x.log": "needle\n", ".h.txt": "needle\n" })
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle", path: "x.log" }, engine)), ["x.log"])
          assert.deepStrictEqual(files(yield* grep(root, { pattern: "needle", path: ".h.txt" }, engine)), [".h.txt"])
        })
      )
    })

    describe("output", () => {
      it.effect("files mode lists matching files in path order", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "b.txt": "x\n", "a/z.txt": "x\n", "a.txt": "x\n", "c.txt": "y\n" })
          const out = yield* grep(root, { pattern: "x" }, engine)
          assert.deepStrictEqual(out, {
            mode: "files",
            files: ["a/z.txt", "a.txt", "b.txt"],
            totalMatches: 3,
            filesSearched: 4,
            truncated: false
          })
        })
      )

      it.effect("content mode groups lines by file, most matches first, with typed context", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "one x\ntwo\n", "b.txt": "x1\nmid\nx2\n" })
          const out = yield* grep(root, { pattern: "x", outputMode: "content", context: 1 }, engine)
          assert.deepStrictEqual(groups(out), [
            {
              path: "b.txt",
              matches: [
                { line: 1, column: 1, text: "x1", before: [], after: [{ line: 2, text: "mid" }] },
                { line: 3, column: 1, text: "x2", before: [{ line: 2, text: "mid" }], after: [] }
              ]
            },
            {
              path: "a.txt",
              matches: [{ line: 1, column: 5, text: "one x", before: [], after: [{ line: 2, text: "two" }] }]
            }
          ])
          assert.strictEqual(out.totalMatches, 3)
        })
      )

      it.effect("content mode shows 2 lines of context by default, and 0 when asked", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "1\n2\n3 x\n4\n5\n6\n" })
          const [dflt] = groups(yield* grep(root, { pattern: "x", outputMode: "content" }, engine))
          assert.deepStrictEqual(
            dflt?.matches[0]?.before.map((l) => l.line),
            [1, 2]
          )
          assert.deepStrictEqual(
            dflt?.matches[0]?.after.map((l) => l.line),
            [4, 5]
          )
          const [none] = groups(yield* grep(root, { pattern: "x", outputMode: "content", context: 0 }, engine))
          assert.deepStrictEqual(none?.matches[0], { line: 3, column: 3, text: "3 x", before: [], after: [] })
        })
      )

      it.effect("count mode counts matching lines per file, most first", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "x x\n", "b.txt": "x\nx\n" })
          const out = yield* grep(root, { pattern: "x", outputMode: "count" }, engine)
          assert.deepStrictEqual(counts(out), [
            { path: "b.txt", count: 2 },
            { path: "a.txt", count: 1 }
          ])
          assert.strictEqual(out.totalMatches, 3)
        })
      )

      it.effect("maxMatches cuts the results and says so", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "x\nx\nx\n", "b.txt": "x\n" })
          const out = yield* grep(root, { pattern: "x", outputMode: "content", context: 0, maxMatches: 2 }, engine)
          assert.deepStrictEqual(
            groups(out).flatMap((g) => g.matches.map((m) => `${g.path}:${m.line}`)),
            ["a.txt:1", "a.txt:2"]
          )
          assert.isTrue(out.truncated)
          assert.strictEqual(out.filesSearched, 1)
        })
      )

      it.effect("maxMatches 0 returns nothing and reports what was left out", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "x\n" })
          const out = yield* grep(root, { pattern: "x", maxMatches: 0 }, engine)
          assert.deepStrictEqual([files(out), out.truncated], [[], true])
        })
      )

      it.effect("exactly maxMatches results are not truncated", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": "x\n", "b.txt": "x\n" })
          const out = yield* grep(root, { pattern: "x", maxMatches: 2 }, engine)
          assert.deepStrictEqual([files(out), out.truncated], [["a.txt", "b.txt"], false])
        })
      )

      it.effect("long lines are cut at 2,000 characters", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.txt": `x${"y".repeat(5000)}\n` })
          const [g] = groups(yield* grep(root, { pattern: "x", outputMode: "content" }, engine))
          assert.strictEqual(g?.matches[0]?.text.length, 2001)
          assert.isTrue(g?.matches[0]?.text.endsWith("…"))
        })
      )

      it.effect("a search with 200,000 matching lines stops at maxMatches", () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "big.txt": "match me\n".repeat(200_000), "z.txt": "match me\n" })
          const out = yield* grep(root, { pattern: "match", outputMode: "content", context: 0 }, engine)
          assert.strictEqual(out.totalMatches, 100)
          assert.deepStrictEqual([out.truncated, out.filesSearched], [true, 1])
        })
      )
    })
  })
}

describe("search.grep engine selection", () => {
  const withPath = <A, E, R>(path: string, effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const before = process.env.PATH
        process.env.PATH = path
        return before
      }),
      () => effect,
      (before) =>
        Effect.sync(() => {
          process.env.PATH = before
        })
    )

  it.effect("the typescript setting uses the TypeScript engine", () =>
    Effect.gen(function* () {
      const engine = yield* Grep.engineInUse.pipe(Effect.provide(Grep.layerEngine("typescript")))
      assert.strictEqual(engine, "typescript")
    })
  )

  it.effect("auto uses the TypeScript engine when rg is not on PATH", () =>
    Effect.gen(function* () {
      const empty = mkdtempSync(join(tmpdir(), "ugent-nopath-"))
      const engine = yield* withPath(empty, Grep.engineInUse)
      rmSync(empty, { recursive: true, force: true })
      assert.strictEqual(engine, "typescript")
    })
  )

  it.effect("the ripgrep setting fails with EngineUnavailable when rg is not on PATH", () =>
    Effect.gen(function* () {
      const empty = mkdtempSync(join(tmpdir(), "ugent-nopath-"))
      const error = yield* withPath(
        empty,
        Effect.flip(Grep.engineInUse.pipe(Effect.provide(Grep.layerEngine("ripgrep"))))
      )
      rmSync(empty, { recursive: true, force: true })
      assert.strictEqual(error._tag, "EngineUnavailable")
    })
  )

  it.effect.skipIf(skipWithoutRg)(`auto uses ripgrep when rg is on PATH${rgNote}`, () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* Grep.engineInUse, "ripgrep")
    })
  )
})
