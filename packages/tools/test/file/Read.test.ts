import { assert, describe, it } from "@effect/vitest"
import { Boundary, ReadProof } from "@ugent/core"
import { Read, Write } from "@ugent/tools"
import { Effect } from "effect"
import { withWorkspace } from "../workspace/fixture.ts"

const lines = (n: number, f: (i: number) => string = (i) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => `${f(i + 1)}\n`).join("")

describe("file.read", () => {
  it.effect("numbers lines N<TAB>line and reports the window, the total and the metadata", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("src/a.ts", "const a = 1\nconst b = 2\n")
        const out = yield* Read.read.run({ path: "src/a.ts" })
        assert.strictEqual(out.path, "src/a.ts")
        assert.strictEqual(out.content, "1\tconst a = 1\n2\tconst b = 2")
        assert.deepStrictEqual([out.startLine, out.endLine, out.totalLines], [1, 2, 2])
        assert.isFalse(out.truncated)
        assert.isNull(out.nextOffset)
        assert.strictEqual(out.metadata.size, 24)
        assert.strictEqual(out.metadata.encoding, "utf-8")
        assert.strictEqual(out.metadata.lineEndings, "lf")
        assert.match(out.metadata.modified, /^\d{4}-\d\d-\d\dT/)
        assert.isUndefined(out.notice)
      })
    )
  )

  it.effect("a whole read returns a Whole proof of the canonical path, hashing the bytes on disk", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "x\ny")
        const out = yield* Read.read.run({ path: "./a.txt" })
        assert.strictEqual(out.proof.coverage._tag, "Whole")
        assert.strictEqual(out.proof.path, "a.txt")
        assert.strictEqual(out.proof.hash, ReadProof.hash("x\ny"))
        assert.isTrue(yield* ReadProof.isReadProof(out.proof))
      })
    )
  )

  it.effect("shows 2,000 lines by default, then truncated with nextOffset", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("long.txt", lines(2500))
        const first = yield* Read.read.run({ path: "long.txt" })
        assert.deepStrictEqual([first.startLine, first.endLine, first.totalLines], [1, 2000, 2500])
        assert.isTrue(first.truncated)
        assert.strictEqual(first.nextOffset, 2001)
        assert.deepStrictEqual(first.proof.coverage, { _tag: "Lines", start: 1, end: 2000 })
        const rest = yield* Read.read.run({ path: "long.txt", offset: first.nextOffset! })
        assert.deepStrictEqual([rest.startLine, rest.endLine], [2001, 2500])
        assert.isFalse(rest.truncated)
        assert.isNull(rest.nextOffset)
        assert.isTrue(rest.content.startsWith("2001\tline 2001\n"))
      })
    )
  )

  it.effect("the default line budget is configurable (500 per read)", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("long.txt", lines(800))
        const out = yield* Read.read.run({ path: "long.txt" }).pipe(Effect.provide(Read.layerLimits({ lines: 500 })))
        assert.strictEqual(out.endLine, 500)
        assert.strictEqual(out.nextOffset, 501)
      })
    )
  )

  it.effect("offset and limit select a window", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", lines(10))
        const out = yield* Read.read.run({ path: "f.txt", offset: 4, limit: 3 })
        assert.strictEqual(out.content, "4\tline 4\n5\tline 5\n6\tline 6")
        assert.deepStrictEqual(out.proof.coverage, { _tag: "Lines", start: 4, end: 6 })
        assert.strictEqual(out.nextOffset, 7)
      })
    )
  )

  it.effect("startLine and endLine (1-based, inclusive) select the lines the documents name", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", lines(10))
        const out = yield* Read.read.run({ path: "f.txt", startLine: 4, endLine: 6 })
        assert.strictEqual(out.content, "4\tline 4\n5\tline 5\n6\tline 6")
        assert.deepStrictEqual(out.proof.coverage, { _tag: "Lines", start: 4, end: 6 })
        // endLine alone counts from line 1; past the end, the file's last line ends the window.
        const head = yield* Read.read.run({ path: "f.txt", endLine: 2 })
        assert.deepStrictEqual([head.startLine, head.endLine, head.nextOffset], [1, 2, 3])
        const tail = yield* Read.read.run({ path: "f.txt", startLine: 9, endLine: 50 })
        assert.deepStrictEqual([tail.startLine, tail.endLine, tail.nextOffset], [9, 10, null])
        // startLine with limit, offset with endLine: each pair names one window.
        const mixed = yield* Read.read.run({ path: "f.txt", offset: 2, endLine: 3 })
        assert.deepStrictEqual([mixed.startLine, mixed.endLine], [2, 3])
        const single = yield* Read.read.run({ path: "f.txt", startLine: 5, endLine: 5 })
        assert.strictEqual(single.content, "5\tline 5")
      })
    )
  )

  it.effect("a line named twice, or an endLine before the start, is refused with what to send", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", lines(10))
        const both = yield* Effect.flip(Read.read.run({ path: "f.txt", startLine: 2, offset: 2 }))
        assert.include(both.message, "startLine and offset both name the first line")
        const bounds = yield* Effect.flip(Read.read.run({ path: "f.txt", endLine: 4, limit: 2 }))
        assert.include(bounds.message, "endLine and limit both bound the lines shown")
        const backwards = yield* Effect.flip(Read.read.run({ path: "f.txt", startLine: 5, endLine: 3 }))
        assert.include(backwards.message, "endLine must be an integer at or after the first line 5 (got 3)")
      })
    )
  )

  it.effect("threat 8: limit 0 is honored (no lines, counts reported), not treated as the default", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", lines(10))
        const out = yield* Read.read.run({ path: "f.txt", limit: 0 })
        assert.strictEqual(out.content, "")
        assert.deepStrictEqual([out.startLine, out.endLine, out.totalLines], [1, 0, 10])
        assert.isTrue(out.truncated)
        assert.strictEqual(out.nextOffset, 1)
        assert.isFalse(ReadProof.covers(out.proof, 1, 1))
      })
    )
  )

  it.effect("threat 8: offset 0 is rejected with a clear error, in process and at the JSON boundary", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", lines(3))
        const e = yield* Effect.flip(Read.read.run({ path: "f.txt", offset: 0 }))
        assert.strictEqual(e._tag, "InvalidInput")
        assert.include(e.message, "1-based")
        const json = yield* Boundary.runJson(Read.read, { path: "f.txt", offset: 0 })
        assert.isFalse(json.ok)
        if (!json.ok) assert.strictEqual(json.error._tag, "InvalidInput")
        const neg = yield* Boundary.runJson(Read.read, { path: "f.txt", limit: -1 })
        assert.isFalse(neg.ok)
      })
    )
  )

  it.effect("lines over 2,000 characters are cut, counted, and the proof covers only the window", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("min.js", `short\n${"x".repeat(5000)}\nend\n`)
        const out = yield* Read.read.run({ path: "min.js" })
        assert.strictEqual(out.linesCut, 1)
        assert.isTrue(out.truncated)
        assert.isNull(out.nextOffset)
        const second = out.content.split("\n")[1]!
        assert.isTrue(second.startsWith(`2\t${"x".repeat(2000)}…`))
        assert.include(second, "3000 more characters")
        assert.deepStrictEqual(out.proof.coverage, { _tag: "Lines", start: 1, end: 3 })
      })
    )
  )

  it.effect("an empty file says so, with a Whole proof", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("empty.txt", "")
        const out = yield* Read.read.run({ path: "empty.txt" })
        assert.strictEqual(out.content, "")
        assert.strictEqual(out.totalLines, 0)
        assert.strictEqual(out.notice, "The file is empty.")
        assert.strictEqual(out.proof.coverage._tag, "Whole")
      })
    )
  )

  it.effect("an offset past the end gives a notice with the valid range", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", lines(12))
        const out = yield* Read.read.run({ path: "f.txt", offset: 50 })
        assert.strictEqual(out.content, "")
        assert.strictEqual(out.notice, "Offset 50 is past the end of the file (12 lines). Use an offset from 1 to 12.")
        assert.isFalse(out.truncated)
      })
    )
  )

  it.effect("a last line without a newline counts; CRLF is shown without \\r and reported", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("crlf.txt", "a\r\nb\r\nc")
        const out = yield* Read.read.run({ path: "crlf.txt" })
        assert.strictEqual(out.content, "1\ta\n2\tb\n3\tc")
        assert.strictEqual(out.totalLines, 3)
        assert.strictEqual(out.metadata.lineEndings, "crlf")
      })
    )
  )

  it.effect("a UTF-8 byte order mark is reported, not shown", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("bom.txt", "\ufeffhello\n")
        const out = yield* Read.read.run({ path: "bom.txt" })
        assert.strictEqual(out.content, "1\thello")
        assert.strictEqual(out.metadata.encoding, "utf-8-bom")
        assert.strictEqual(out.proof.hash, ReadProof.hash(Buffer.from("\ufeffhello\n")))
      })
    )
  )

  it.effect("a directory is NotAFile, a binary file BinaryFile, a file over 1 MB FileTooLarge", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.dir("src")
        fx.file("img.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]))
        fx.file("big.log", "y".repeat(1_100_000))
        assert.strictEqual((yield* Effect.flip(Read.read.run({ path: "src" })))._tag, "NotAFile")
        assert.strictEqual((yield* Effect.flip(Read.read.run({ path: "img.png" })))._tag, "BinaryFile")
        const big = yield* Effect.flip(Read.read.run({ path: "big.log" }))
        assert.strictEqual(big._tag, "FileTooLarge")
        assert.include(big.message, "search.grep")
      })
    )
  )

  it.effect("the byte cap is configurable", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("f.txt", "z".repeat(200))
        const e = yield* Effect.flip(
          Read.read.run({ path: "f.txt" }).pipe(Effect.provide(Read.layerLimits({ maxBytes: 100 })))
        )
        assert.strictEqual(e._tag, "FileTooLarge")
      })
    )
  )

  it.effect(
    "across a JSON boundary the proof is a signed token, accepted back by file.write; a forged one is not",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("a.txt", "old\n")
          const read = yield* Boundary.runJson(Read.read, { path: "a.txt" })
          assert.isTrue(read.ok)
          if (!read.ok) return
          const token = (read.result as { proof: unknown }).proof
          assert.isString(token)
          assert.isTrue((token as string).startsWith("rp1."))
          const write = yield* Boundary.runJson(Write.write, { path: "a.txt", content: "new\n", proof: token })
          assert.isTrue(write.ok)
          const forged = `${(token as string).slice(0, -4)}AAAA`
          const bad = yield* Boundary.runJson(Write.write, { path: "a.txt", content: "evil\n", proof: forged })
          assert.isFalse(bad.ok)
          if (!bad.ok) assert.strictEqual(bad.error._tag, "InvalidInput")
        })
      )
  )
})
