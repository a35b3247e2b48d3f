/**
 * The two engines of `search.grep` give the same answers. Each test builds a
 * tree (by hand, or generated from a seed), runs the same calls on the
 * ripgrep engine and the TypeScript engine, and compares the results: the
 * files, lines, context, counts, totals, files searched and truncation, or,
 * for a failure, its tag and reason (the messages come from each engine).
 */
import { assert, describe, it } from "@effect/vitest"
import type { Grep } from "@ugent/tools"
import { Effect, Exit } from "effect"
import { grepExit, rgNote, rgPresent, rgRequired, skipWithoutRg, type Tree, workspace } from "./fixture.ts"

/** What must agree: the whole output, or the failure's tag and reason. */
const comparable = (exit: Exit.Exit<Grep.Output, unknown>): unknown => {
  if (Exit.isSuccess(exit)) return exit.value
  const reason = exit.cause.reasons[0]
  if (reason?._tag !== "Fail") return { defect: String(exit.cause) }
  const error = reason.error as { readonly _tag: string; readonly reason?: unknown }
  return { failure: error._tag, reason: error.reason }
}

/** Runs every input on both engines; returns the inputs whose answers differ, with both answers. */
const differences = (root: string, inputs: ReadonlyArray<Grep.Input>) =>
  Effect.gen(function* () {
    const found: Array<{ input: Grep.Input; ripgrep: unknown; typescript: unknown }> = []
    for (const input of inputs) {
      const ripgrep = comparable(yield* grepExit(root, input, "ripgrep"))
      const typescript = comparable(yield* grepExit(root, input, "typescript"))
      if (JSON.stringify(ripgrep) !== JSON.stringify(typescript)) found.push({ input, ripgrep, typescript })
    }
    return found
  })

const expectSame = (tree: Tree, inputs: ReadonlyArray<Grep.Input>) =>
  Effect.gen(function* () {
    const root = yield* workspace(tree)
    const diff = yield* differences(root, inputs)
    assert.deepStrictEqual(diff, [], `${diff.length} of ${inputs.length} calls differ`)
  })

// ---------------------------------------------------------------------------
// A hand-made project with every kind of file the walk must decide on
// ---------------------------------------------------------------------------

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1)).join("\n")

/** 70,000 bytes of lines, then `tail`: a NUL there lies past ripgrep's 64 KiB binary window. */
const pastWindow = (tail: string) => Buffer.from(`${lines(3500, (i) => `line ${i} foo`.padEnd(19, "."))}\n${tail}`)

const project: Tree = {
  ".gitignore": "*.log\n!keep.log\n/anchored.txt\ntmp/\nsub/*.tmp\n**/gen/**\n# a comment\n\\#hash.txt\n",
  ".ignore": "by-dot-ignore.txt\n",
  ".rgignore": "!rg-kept.log\n",
  ".hidden.txt": "foo in a hidden file\n",
  ".config/settings.json": '{ "foo": 1 }\n',
  "src/a.ts":
    "import { foo } from './foo'\nexport const Foo = foo\nconst FOO_BAR = 1\nfoobar()\n  // foo_bar\nno match here\nfinal foo\n",
  "src/b.tsx": "export const B = () => <Foo bar={1} />\n",
  "src/c.js": "module.exports = { foo: true }\n",
  "src/d.md": "# Foo\n\nSome foo text.\n",
  "src/anchored.txt": "foo (anchored only at the root)\n",
  "src/sub/.gitignore": "!*.log\n*.txt\n!keep.txt\n",
  "src/sub/x.log": "foo in a log the sub directory keeps\n",
  "src/sub/y.txt": "foo ignored by sub/.gitignore\n",
  "src/sub/keep.txt": "foo kept again\n",
  "src/sub/z.tmp": "foo (sub/*.tmp is anchored at the root)\n",
  "src/gen/x.ts": "foo generated\n",
  "sub/z.tmp": "foo ignored tmp\n",
  "anchored.txt": "foo ignored at the root\n",
  "#hash.txt": "foo in an escaped name\n",
  "debug.log": "foo in an ignored log\n",
  "keep.log": "foo in a kept log\n",
  "rg-kept.log": "foo kept by .rgignore\n",
  "by-dot-ignore.txt": "foo ignored by .ignore\n",
  "gen/out.ts": "foo generated\n",
  "tmp/t.txt": "foo in tmp\n",
  "node_modules/pkg/index.js": "foo in a dependency\n",
  "dist/x.js": "foo built\n",
  ".env": "FOO=secret\n",
  "secrets/keys.txt": "foo key\n",
  "nested/.git/HEAD": "ref: refs/heads/main\n",
  "nested/debug.log": "foo: the root *.log stops at a nested repository\n",
  "bin/start.bin": Buffer.from("\0foo binary from the start\n"),
  "bin/late.bin": pastWindow("foo before a late NUL\nbinary \0 here\nfoo after it\n"),
  "bin/late-match.bin": pastWindow("foo \0 inside a match\nfoo after\n"),
  "ünïcödé/名前.txt": "foo 名前 Ωμέγα\nΣΊΣΥΦΟΣ σίσυφος foo\n",
  "emoji-😀.md": "foo 😀 emoji\n",
  "crlf.txt": "foo\r\nbar\r\nfoo bar\r\n",
  "empty.txt": "",
  "noeol.txt": "first\nfoo at the end",
  "long.txt": `${"x".repeat(100_000)} foo\nshort foo\n`,
  "bom.txt": "\uFEFFfoo after a byte order mark\nsecond foo\n",
  "utf16.txt": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("foo in utf-16\nbar\n", "utf16le")]),
  "kelvin.txt": "\u212Aelvin sign\nlong \u017F here\nplain k and s\n",
  "many.txt": lines(60, (i) => (i % 3 === 0 ? `foo ${i}` : `other ${i}`)),
  "-dash.txt": "--foo starts with dashes\n-e is not an option\n",
  "with space.txt": "foo with space\n",
  "line\nbreak.txt": "foo in a name with a line break\n",
  "link-file": { link: "src/a.ts" },
  "link-dir": { link: "src" }
}

const patterns: ReadonlyArray<string> = [
  "foo",
  "Foo",
  "\\bfoo\\b",
  "fo+",
  "^foo",
  "foo$",
  "f.o",
  "[Ff]oo\\w*",
  "\\d+",
  "\\p{Greek}+",
  "(foo|bar)",
  "x{3,}",
  "(?-i)Foo",
  "\\x66oo",
  "\\Qfoo(\\E",
  "a\\.b",
  "[^a-z ]",
  "\\s\\S",
  "\\Bo",
  "k",
  "s",
  "σίσυφος",
  "名前",
  "",
  "-e",
  "--foo",
  "\\bis\\b",
  "(a+)+$"
]

const options: ReadonlyArray<Omit<Grep.Input, "pattern">> = [
  {},
  { outputMode: "content" },
  { outputMode: "content", contextBefore: 1, contextAfter: 0 },
  { outputMode: "content", context: 0, caseSensitive: true },
  { outputMode: "count" },
  { glob: "*.ts" },
  { glob: "!*.md", outputMode: "count" },
  { glob: "src/**", outputMode: "content", context: 1 },
  { glob: "*.{ts,md}" },
  { type: "ts" },
  { type: "md", outputMode: "content" },
  { maxMatches: 1 },
  { maxMatches: 3, outputMode: "content" },
  { maxMatches: 0, outputMode: "count" },
  { path: "src" },
  { path: "src/a.ts", outputMode: "content" },
  { path: "node_modules" },
  { path: "many.txt", outputMode: "content", maxMatches: 5, context: 3 },
  { path: "#hash.txt", outputMode: "count" },
  { path: "with space.txt" },
  { path: "ünïcödé", outputMode: "content" }
]

// ---------------------------------------------------------------------------
// Generated trees
// ---------------------------------------------------------------------------

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
const generator = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[int(xs.length)]!
  return { next, int, pick }
}

const words = ["foo", "Foo", "FOO", "bar", "baz", "名前", "Ωμέγα", "σίσυφος", "ſ", "\u212A", "k", "😀", "a.b"]
const moreWords = ["x-y", "_", "(", ")", "\t", "0123", "e\u0301", "ß", "İ", "foobar", "barfoo", "", "  "]
const dirNames = ["src", "lib", "a", "b", "Ω", "dir with space", ".hid", "gen", "deep", "node_modules"]
const fileNames = ["a.ts", "b.md", "c.txt", "d.js", "e.log", ".dot", "f", "名前.txt", "g.TS", "h.tsx"]
const ignoreLines = ["*.log", "!e.log", "*.md", "!b.md", "/c.txt", "deep/", "gen/**", ".hid/", "!.hid/", "*.txt"]
const moreIgnoreLines = ["!名前.txt", "a/", "b/**/f", "[ab].ts", "!*.ts", "lib", "**/d.js", "f", "!f", "src/*.md"]

const generatedTree = (seed: number): Tree => {
  const g = generator(seed)
  const tree: Record<string, Tree[string]> = {}
  const vocabulary = [...words, ...moreWords]
  const line = () => Array.from({ length: g.int(7) }, () => g.pick(vocabulary)).join(g.pick([" ", "", "  "]))
  const content = (): string | Uint8Array => {
    const eol = g.next() < 0.2 ? "\r\n" : "\n"
    const body = Array.from({ length: g.int(25) }, line).join(eol) + (g.next() < 0.8 ? eol : "")
    const roll = g.next()
    if (roll < 0.05) return Buffer.from(`\0${body}`)
    if (roll < 0.1) return Buffer.from(`${body}\0`)
    if (roll < 0.13) return `${"y".repeat(70_000)} foo\n${body}`
    return body
  }
  const dirs = [""]
  for (let i = 0; i < 6; i++) {
    const parent = g.pick(dirs)
    const dir = parent === "" ? g.pick(dirNames) : `${parent}/${g.pick(dirNames)}`
    if (!dirs.includes(dir)) dirs.push(dir)
  }
  for (const dir of dirs) {
    const prefix = dir === "" ? "" : `${dir}/`
    for (let i = 0; i < 1 + g.int(5); i++) tree[`${prefix}${g.pick(fileNames)}`] = content()
    if (g.next() < 0.5) {
      const rules = Array.from({ length: 1 + g.int(4) }, () => g.pick([...ignoreLines, ...moreIgnoreLines]))
      tree[`${prefix}${g.pick([".gitignore", ".gitignore", ".ignore", ".rgignore"])}`] = `${rules.join("\n")}\n`
    }
    if (dir !== "" && g.next() < 0.1) tree[`${prefix}.git/HEAD`] = "ref: refs/heads/main\n"
  }
  return tree
}

const generatedInputs = (seed: number): ReadonlyArray<Grep.Input> => {
  const g = generator(seed * 7919)
  const pool = [
    ...patterns.filter((p) => p !== ""),
    "\\w+",
    "(?i)ωμέγα",
    "[^\\x00-\\x7F]",
    "o{2}",
    "^$",
    "\\bk\\b",
    "ß"
  ]
  return Array.from({ length: 25 }, () => {
    const input: { -readonly [K in keyof Grep.Input]: Grep.Input[K] } = { pattern: g.pick(pool) }
    const mode = g.pick(["files", "content", "count"] as const)
    if (mode !== "files" || g.next() < 0.5) input.outputMode = mode
    if (g.next() < 0.3) input.caseSensitive = g.next() < 0.5
    if (g.next() < 0.3) input.maxMatches = g.int(6)
    if (mode === "content" && g.next() < 0.5) input.context = g.int(4)
    if (mode === "content" && g.next() < 0.3) input.contextAfter = g.int(3)
    if (g.next() < 0.2) input.glob = g.pick(["*.ts", "!*.md", "src/**", "*.{ts,txt}", "**/a/**", "[a-c].*"])
    if (g.next() < 0.15) input.type = g.pick(["ts", "md", "txt", "js"])
    if (g.next() < 0.15) input.path = g.pick(["src", "lib", "a", "deep", "c.txt"])
    return input
  })
}

describe("search.grep", () => {
  describe("differential: ripgrep and TypeScript engines", () => {
    it(`have rg to compare with, or say why the comparisons are skipped${rgNote}`, () => {
      // Without rg the comparisons below are skipped locally and fail under CI: this is where CI fails.
      assert.isTrue(rgPresent || !rgRequired, "rg must be on PATH when CI is set (apt-get install -y ripgrep)")
    })

    for (const pattern of patterns) {
      it.effect.skipIf(skipWithoutRg)(`agree on ${JSON.stringify(pattern)} in a hand-made project${rgNote}`, () =>
        expectSame(
          project,
          options.map((o) => ({ ...o, pattern }))
        )
      )
    }

    for (const seed of [1, 2, 3, 4, 5, 6]) {
      it.effect.skipIf(skipWithoutRg)(`agree on a generated tree (seed ${seed})${rgNote}`, () =>
        expectSame(generatedTree(seed), generatedInputs(seed))
      )
    }

    it.effect.skipIf(skipWithoutRg)(`agree on invalid patterns${rgNote}`, () =>
      expectSame(
        project,
        ["(", "[a", "a{2,1}", "\\", "x\\n", "[\\n]", "a\0b", "(?P<n>a", "a**"].map((pattern) => ({ pattern }))
      )
    )

    it.effect.skipIf(skipWithoutRg)(`agree on globs with classes, escapes and anchors${rgNote}`, () =>
      expectSame(
        project,
        ["/src/*.ts", "**/sub/**", "[a-c].*", "src/[!a]*", "*.t?", "\\#*", "*/", "!src", "emoji-*"].map((glob) => ({
          pattern: "foo",
          glob,
          outputMode: "count" as const
        }))
      )
    )
  })
})
