import { mkdirSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Glob, List } from "@ugent/tools"
import { Effect, Exit } from "effect"
import fg from "fast-glob"
import { watched } from "../loop.ts"
import { withWorkspace } from "../workspace/fixture.ts"

describe("file.glob", () => {
  it.effect("matches a pattern, sorted by path, relative to the root", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (const f of ["src/z.ts", "src/a.ts", "src/sub/m.ts", "README.md", "a.ts"]) fx.file(f, "")
        const out = yield* Glob.glob.run({ pattern: "**/*.ts" })
        assert.deepStrictEqual(out.files, ["a.ts", "src/a.ts", "src/sub/m.ts", "src/z.ts"])
        assert.strictEqual(out.totalMatches, 4)
        assert.isFalse(out.truncated)
      })
    )
  )

  it.effect(
    "brace alternatives each match as a pattern of their own, a leading ** included; huge ones match whole",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          for (const f of ["tests/cli.rs", "src/main.rs", "src/lib.rs", "Jenkinsfile", "a/b/tests/x.py", "f7.txt"]) {
            fx.file(f, "")
          }
          const files = (pattern: string) => Effect.map(Glob.glob.run({ pattern, hidden: true }), (o) => o.files)
          assert.deepStrictEqual(yield* files("{**/tests/**,Jenkinsfile}"), [
            "Jenkinsfile",
            "a/b/tests/x.py",
            "tests/cli.rs"
          ])
          assert.deepStrictEqual(yield* files("src/{main,lib}.rs"), ["src/lib.rs", "src/main.rs"])
          // 26^4 alternatives are not made: the pattern is matched whole.
          assert.deepStrictEqual(yield* files("{a..z}{a..z}{a..z}{a..z}/x"), [])
          assert.deepStrictEqual(yield* files("f{1..9}.txt"), ["f7.txt"])
        })
      )
  )

  it.effect("searches under `path`, still returning paths relative to the root", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (const f of ["src/a.ts", "lib/b.ts"]) fx.file(f, "")
        const out = yield* Glob.glob.run({ pattern: "*.ts", path: "src" })
        assert.deepStrictEqual(out.files, ["src/a.ts"])
      })
    )
  )

  it.effect("node_modules, .git, dist and build are not searched", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (const f of ["node_modules/p/i.js", "dist/i.js", "build/i.js", "pkg/node_modules/q/i.js", "src/i.js"]) {
          fx.file(f, "")
        }
        fx.file(".git/hooks/x.js", "")
        const out = yield* Glob.glob.run({ pattern: "**/*.js", hidden: true })
        assert.deepStrictEqual(out.files, ["src/i.js"])
      })
    )
  )

  it.effect("hidden files only on request; blocked names never", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (const f of [".eslintrc.json", ".env.json", "a.json", ".config/x.json", "secrets.json"]) fx.file(f, "")
        const plain = yield* Glob.glob.run({ pattern: "**/*.json" })
        assert.deepStrictEqual(plain.files, ["a.json"])
        const hidden = yield* Glob.glob.run({ pattern: "**/*.json", hidden: true })
        assert.deepStrictEqual(hidden.files, [".config/x.json", ".eslintrc.json", "a.json"])
      })
    )
  )

  it.effect("sort by modified (newest first) and by size (largest first), ties broken by path", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        const t = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s))
        const files: ReadonlyArray<readonly [string, string, number]> = [
          ["b.txt", "xx", 10],
          ["a.txt", "xx", 10],
          ["c.txt", "xxxx", 30],
          ["d.txt", "x", 20]
        ]
        for (const [f, content, s] of files) utimesSync(fx.file(f, content), t(s), t(s))
        const byTime = yield* Glob.glob.run({ pattern: "*.txt", sort: "modified" })
        assert.deepStrictEqual(byTime.files, ["c.txt", "d.txt", "a.txt", "b.txt"])
        const bySize = yield* Glob.glob.run({ pattern: "*.txt", sort: "size" })
        assert.deepStrictEqual(bySize.files, ["c.txt", "a.txt", "b.txt", "d.txt"])
      })
    )
  )

  it.effect("each path comes with its size and modification time; sortBy name, mtime or size orders them", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        const t = (s: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, s))
        const files: ReadonlyArray<readonly [string, string, number]> = [
          ["b.txt", "xx", 10],
          ["a.txt", "xx", 10],
          ["c.txt", "xxxx", 30],
          ["d.txt", "x", 20]
        ]
        for (const [f, content, s] of files) utimesSync(fx.file(f, content), t(s), t(s))
        const byName = yield* Glob.glob.run({ pattern: "*.txt" })
        assert.deepStrictEqual(byName.entries, [
          { path: "a.txt", size: 2, modified: "2024-01-01T00:00:10.000Z" },
          { path: "b.txt", size: 2, modified: "2024-01-01T00:00:10.000Z" },
          { path: "c.txt", size: 4, modified: "2024-01-01T00:00:30.000Z" },
          { path: "d.txt", size: 1, modified: "2024-01-01T00:00:20.000Z" }
        ])
        assert.deepStrictEqual(
          byName.entries.map((e) => e.path),
          byName.files
        )
        const byMtime = yield* Glob.glob.run({ pattern: "*.txt", sortBy: "mtime" })
        assert.deepStrictEqual(byMtime.files, ["c.txt", "d.txt", "a.txt", "b.txt"])
        const bySize = yield* Glob.glob.run({ pattern: "*.txt", sortBy: "size", limit: 2 })
        assert.deepStrictEqual(
          bySize.entries.map((e) => [e.path, e.size]),
          [
            ["c.txt", 4],
            ["a.txt", 2]
          ]
        )
        const same = yield* Glob.glob.run({ pattern: "*.txt", sort: "modified", sortBy: "mtime" })
        assert.deepStrictEqual(same.files, byMtime.files)
        const two = yield* Effect.flip(Glob.glob.run({ pattern: "*.txt", sort: "size", sortBy: "mtime" }))
        assert.include(two.message, "sort and sortBy name two orders")
      })
    )
  )

  it.effect("limit cuts the result and reports the total", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (let i = 0; i < 12; i++) fx.file(`f${String(i).padStart(2, "0")}.md`, "")
        const out = yield* Glob.glob.run({ pattern: "*.md", limit: 5 })
        assert.deepStrictEqual(out.files, ["f00.md", "f01.md", "f02.md", "f03.md", "f04.md"])
        assert.strictEqual(out.totalMatches, 12)
        assert.isTrue(out.truncated)
      })
    )
  )

  it.effect("the default limit is 500", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (let i = 0; i < 510; i++) fx.file(`d/f${i}.txt`, "")
        const out = yield* Glob.glob.run({ pattern: "**/*.txt" })
        assert.strictEqual(out.files.length, 500)
        assert.strictEqual(out.totalMatches, 510)
      })
    )
  )

  it.effect("threat 8: limit 0 and maxDepth 0 are values, not 'not given'", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (const f of ["top.ts", "a/one.ts", "a/b/two.ts"]) fx.file(f, "")
        const none = yield* Glob.glob.run({ pattern: "**/*.ts", limit: 0 })
        assert.deepStrictEqual(none.files, [])
        assert.strictEqual(none.totalMatches, 3)
        assert.isTrue(none.truncated)
        const flat = yield* Glob.glob.run({ pattern: "**/*.ts", maxDepth: 0 })
        assert.deepStrictEqual(flat.files, ["top.ts"])
        const one = yield* Glob.glob.run({ pattern: "**/*.ts", maxDepth: 1 })
        assert.deepStrictEqual(one.files, ["a/one.ts", "top.ts"])
      })
    )
  )

  it.effect("threat 10: a NUL byte in the pattern is refused", () =>
    withWorkspace(() =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(Glob.glob.run({ pattern: "*.ts\0" }))
        assert.strictEqual(e._tag, "InvalidInput")
        assert.include(e.message, "NUL")
        const p = yield* Effect.flip(Glob.glob.run({ pattern: "*", path: "src\0" }))
        assert.strictEqual(p._tag, "InvalidPath")
      })
    )
  )

  it.effect("patterns that climb out or are absolute are refused", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("src/a.ts", "")
        for (const pattern of ["../*", "../outside/*", "src/../../*", "{..,src}/*", "/etc/*", "{/etc,src}/*", "~/x"]) {
          const e = yield* Effect.flip(Glob.glob.run({ pattern, path: "src" }))
          assert.strictEqual(e._tag, "InvalidInput", pattern)
        }
        const e = yield* Effect.flip(Glob.glob.run({ pattern: "*", path: "../outside" }))
        assert.strictEqual(e._tag, "OutsideWorkspace")
      })
    )
  )

  it.effect("links are not descended into; a link to a file inside is listed, one outside is not", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("real/a.txt", "")
        fx.link("real", "linked-dir")
        fx.link("real/a.txt", "alias.txt")
        fx.link(join(fx.outside, "data.txt"), "out.txt")
        fx.link(fx.outside, "out-dir")
        fx.link("nowhere", "broken.txt")
        const out = yield* Glob.glob.run({ pattern: "**/*.txt" })
        assert.deepStrictEqual(out.files, ["alias.txt", "real/a.txt"])
      })
    )
  )

  it.effect("respectGitignore leaves out what .gitignore files ignore, nested ones included", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file(".gitignore", "*.log\ntmp/\n")
        fx.file("pkg/.gitignore", "gen.ts\n")
        for (const f of ["a.log", "a.ts", "tmp/b.ts", "pkg/gen.ts", "pkg/keep.ts", "gen.ts"]) fx.file(f, "")
        const all = yield* Glob.glob.run({ pattern: "**/*.{ts,log}" })
        assert.strictEqual(all.totalMatches, 6)
        const kept = yield* Glob.glob.run({ pattern: "**/*.{ts,log}", respectGitignore: true })
        assert.deepStrictEqual(kept.files, ["a.ts", "gen.ts", "pkg/keep.ts"])
        const under = yield* Glob.glob.run({ pattern: "**/*.ts", path: "pkg", respectGitignore: true })
        assert.deepStrictEqual(under.files, ["pkg/keep.ts"])
      })
    )
  )

  it.effect("is deterministic: the same tree gives the same order every time", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        for (let i = 0; i < 50; i++) fx.file(`d${i % 7}/f${(i * 37) % 50}.txt`, "")
        const first = yield* Glob.glob.run({ pattern: "**/*.txt", sort: "size" })
        for (let i = 0; i < 3; i++) {
          const again = yield* Glob.glob.run({ pattern: "**/*.txt", sort: "size" })
          assert.deepStrictEqual(again.files, first.files)
        }
      })
    )
  )

  describe("depth and size", () => {
    it.effect("a leaf 300 levels down is found when maxDepth allows it; the default depth says it cut the walk", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          const deep = `${Array.from({ length: 300 }, () => "d").join("/")}/leaf.txt`
          fx.file(deep, "leaf\n")
          fx.file("near/leaf.txt", "leaf\n")
          const cut = yield* Glob.glob.run({ pattern: "**/leaf.txt" })
          assert.deepStrictEqual(cut.files, ["near/leaf.txt"])
          assert.isTrue(cut.truncated, "a walk cut by maxDepth must say so")
          assert.deepStrictEqual(cut.truncatedBy, ["maxDepth"])
          const all = yield* Glob.glob.run({ pattern: "**/leaf.txt", maxDepth: 300 })
          assert.deepStrictEqual(all.files, [deep, "near/leaf.txt"])
          assert.isFalse(all.truncated)
          assert.isUndefined(all.truncatedBy)
          // A pattern that cannot match below the cut does not report one.
          const shallow = yield* Glob.glob.run({ pattern: "near/*.txt", maxDepth: 1 })
          assert.deepStrictEqual([shallow.files, shallow.truncated], [["near/leaf.txt"], false])
        })
      )
    )

    it.live(
      "a directory of 100,000 entries holding no match never holds the event loop for long",
      () =>
        withWorkspace((fx) =>
          Effect.gen(function* () {
            const dir = fx.dir("many")
            for (let i = 0; i < 100_000; i++) writeFileSync(join(dir, `f${i}.txt`), "")
            fx.file("a/leaf.txt", "leaf\n")
            const call = yield* watched(Glob.glob.run({ pattern: "**/leaf.txt" }))
            // It used to look at every entry without letting anything else run: 1.9 s with nothing else running.
            assert.isBelow(call.maxPause, 250, `the event loop was held for ${Math.round(call.maxPause)} ms`)
            const out = Exit.isSuccess(call.exit) ? call.exit.value : assert.fail(String(call.exit))
            assert.deepStrictEqual(out.files, ["a/leaf.txt"])
          })
        ),
      { timeout: 120_000 }
    )
  })

  describe("threat 35: the static part of a pattern never walks through a link out of the root", () => {
    const patterns = [
      "outlink/*",
      "outlink/**",
      "outlink/**/*",
      "outlink/data.txt",
      "outlink/sub/*",
      "*/data.txt",
      "**/data.txt",
      "{outlink,x}/*",
      "outlink/*/*.txt",
      "rootlink/etc/*",
      "rootlink/etc/hostname",
      "rootlink/*",
      "rootlink/**/hostname"
    ]

    it.effect("lists nothing behind a link to a directory outside, whatever the pattern, order or hidden flag", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          mkdirSync(join(fx.outside, "sub"))
          writeFileSync(join(fx.outside, "sub", "deep.txt"), "outside\n")
          writeFileSync(join(fx.outside, ".hidden"), "outside\n")
          fx.link(fx.outside, "outlink")
          fx.link("/", "rootlink")
          fx.file("inside.txt", "")
          for (const pattern of patterns) {
            for (const sort of ["name", "modified", "size"] as const) {
              const out = yield* Glob.glob.run({ pattern, hidden: true, sort })
              assert.deepStrictEqual(out.files, [], `${pattern} (${sort})`)
              assert.strictEqual(out.totalMatches, 0, `${pattern} (${sort})`)
            }
          }
          // The link itself is refused as a place to search or list, as before.
          const e = yield* Effect.flip(Glob.glob.run({ pattern: "*", path: "outlink" }))
          assert.strictEqual(e._tag, "OutsideWorkspace")
          const l = yield* Effect.flip(List.list.run({ path: "rootlink" }))
          assert.strictEqual(l._tag, "OutsideWorkspace")
        })
      )
    )

    it.effect("a link to a directory inside is not walked either; its files are found by their own path", () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("real/a.txt", "")
          fx.link("real", "alias")
          const out = yield* Glob.glob.run({ pattern: "alias/*" })
          assert.deepStrictEqual(out.files, [])
          const direct = yield* Glob.glob.run({ pattern: "*", path: "alias" })
          assert.deepStrictEqual(direct.files, ["real/a.txt"])
        })
      )
    )
  })

  describe("the same matches as fast-glob", () => {
    const tree = [
      "a.ts",
      "b.tsx",
      "README.md",
      ".eslintrc.json",
      "src/index.ts",
      "src/util/deep/x.ts",
      "src/util/y.js",
      "src/.hidden/z.ts",
      ".github/workflows/ci.yml",
      "docs/guide/intro.md",
      "docs/api.md",
      "lib/a1.ts",
      "lib/a2.ts",
      "lib/b[1].ts",
      "pkg/node_modules/m/i.ts",
      "pkg/src/p.ts"
    ]
    const patterns = [
      "**/*",
      "*",
      "**/*.ts",
      "src/**",
      "src/**/*.ts",
      "src/*/*.{ts,js}",
      "**/*.{md,yml}",
      ".github/**/*.yml",
      "**/.hidden/*",
      "lib/a?.ts",
      "lib/a[12].ts",
      "lib/*[[]1].ts",
      "{src,docs}/**/*.md",
      "{src,docs/guide}/*",
      "@(src|lib)/*.ts",
      "!(src)/*.ts",
      "**/util/**",
      "./src/*.ts",
      "*/*/",
      "src/util/deep/x.ts",
      "nothing/**"
    ]

    it.effect(
      "for patterns with stars, globstars, braces, classes and extglobs, hidden or not, at several depths",
      () =>
        withWorkspace((fx) =>
          Effect.gen(function* () {
            for (const f of tree) fx.file(f, "")
            for (const pattern of patterns) {
              for (const hidden of [false, true]) {
                // fast-glob counts depth from the pattern's fixed directory (`src` in `src/**`); file.glob from `path`.
                const floating = /^(\*|\?|[@!+]\()/.test(pattern)
                for (const maxDepth of floating ? [0, 1, 10] : [10]) {
                  const expected = (yield* Effect.promise(() =>
                    fg(pattern, {
                      cwd: fx.root,
                      dot: hidden,
                      deep: maxDepth + 1,
                      followSymbolicLinks: false,
                      ignore: ["**/node_modules", "**/node_modules/**"]
                    })
                  ))
                    // fast-glob keeps a leading `./` of the pattern in its results; file.glob gives clean paths.
                    .map((f) => f.replace(/^\.\//, ""))
                    .sort()
                  const out = yield* Glob.glob.run({ pattern, hidden, maxDepth, limit: 10_000 })
                  assert.deepStrictEqual(out.files, expected, `${pattern} hidden=${hidden} maxDepth=${maxDepth}`)
                }
              }
            }
          })
        )
    )
  })
})
