import { readFileSync, writeFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Changes, ReadProof } from "@ugent/core"
import { Edit, Read } from "@ugent/tools"
import { Effect } from "effect"
import { withWorkspace } from "../workspace/fixture.ts"

const proofOf = (path: string, window?: { offset?: number; limit?: number }) =>
  Effect.map(Read.read.run({ path, ...window }), (r) => r.proof)

describe("file.edit", () => {
  it.effect("replaces a unique exact text (single form) and returns a diff and a fresh proof", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.ts", "const a = 1\nconst b = 2\n")
        const proof = yield* proofOf("a.ts")
        const out = yield* Edit.edit.run({ path: "a.ts", proof, oldText: "b = 2", newText: "b = 3" })
        assert.strictEqual(readFileSync(fx.at("a.ts"), "utf8"), "const a = 1\nconst b = 3\n")
        assert.strictEqual(out.replacements, 1)
        assert.isFalse(out.dryRun)
        assert.include(out.diff, "-const b = 2")
        assert.include(out.diff, "+const b = 3")
        assert.strictEqual(out.proof?.hash, ReadProof.hash("const a = 1\nconst b = 3\n"))
        // The fresh proof chains.
        yield* Edit.edit.run({ path: "a.ts", proof: out.proof!, oldText: "a = 1", newText: "a = 0" })
        assert.strictEqual(readFileSync(fx.at("a.ts"), "utf8"), "const a = 0\nconst b = 3\n")
      })
    )
  )

  it.effect("threat 6 (replacement patterns): $&, $$, $` and $' are inserted literally", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("p.txt", "before TOKEN after\n")
        const proof = yield* proofOf("p.txt")
        const newText = "[$&|$$|$`|$'|$1|$<name>]"
        yield* Edit.edit.run({ path: "p.txt", proof, oldText: "TOKEN", newText })
        assert.strictEqual(readFileSync(fx.at("p.txt"), "utf8"), `before ${newText} after\n`)
        const again = yield* proofOf("p.txt")
        yield* Edit.edit.run({ path: "p.txt", proof: again, oldText: "$&", newText: "$'", replaceAll: true })
        assert.strictEqual(readFileSync(fx.at("p.txt"), "utf8"), "before [$'|$$|$`|$'|$1|$<name>] after\n")
      })
    )
  )

  it.effect("oldText with regular-expression characters matches literally", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("r.txt", "a.b a*b (a|b)\n")
        const proof = yield* proofOf("r.txt")
        yield* Edit.edit.run({ path: "r.txt", proof, oldText: "(a|b)", newText: "c" })
        assert.strictEqual(readFileSync(fx.at("r.txt"), "utf8"), "a.b a*b c\n")
      })
    )
  )

  it.effect("threat 7 (ambiguous edits): a text that occurs twice is refused with the count, and nothing changes", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("d.txt", "x = 1\ny = 2\nx = 1\n")
        const proof = yield* proofOf("d.txt")
        const e = yield* Effect.flip(Edit.edit.run({ path: "d.txt", proof, oldText: "x = 1", newText: "x = 9" }))
        assert.strictEqual(e._tag, "EditFailed")
        assert.strictEqual((e as Edit.EditFailed).reason, "ambiguous")
        assert.strictEqual((e as Edit.EditFailed).matches, 2)
        assert.include(e.message, "occurs 2 times")
        assert.include(e.message, "replaceAll")
        assert.strictEqual(readFileSync(fx.at("d.txt"), "utf8"), "x = 1\ny = 2\nx = 1\n")
      })
    )
  )

  it.effect("threat 7: overlapping occurrences count as ambiguous", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("o.txt", "aaa\n")
        const proof = yield* proofOf("o.txt")
        const e = yield* Effect.flip(Edit.edit.run({ path: "o.txt", proof, oldText: "aa", newText: "b" }))
        assert.strictEqual((e as Edit.EditFailed).matches, 2)
      })
    )
  )

  it.effect("replaceAll replaces every occurrence", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("d.txt", "x = 1\ny = 2\nx = 1\n")
        const proof = yield* proofOf("d.txt")
        const out = yield* Edit.edit.run({ path: "d.txt", proof, oldText: "x = 1", newText: "x = 9", replaceAll: true })
        assert.strictEqual(out.replacements, 2)
        assert.strictEqual(readFileSync(fx.at("d.txt"), "utf8"), "x = 9\ny = 2\nx = 9\n")
      })
    )
  )

  it.effect("threat 7 (whitespace fallback): a whitespace-only difference is a hint with the line, never applied", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        const original = "function f() {\n\treturn  1\n}\n"
        fx.file("w.ts", original)
        const proof = yield* proofOf("w.ts")
        const e = yield* Effect.flip(
          Edit.edit.run({ path: "w.ts", proof, oldText: "function f() {\n  return 1\n}", newText: "X" })
        )
        assert.strictEqual((e as Edit.EditFailed).reason, "not-found")
        assert.include((e as Edit.EditFailed).hint ?? "", "line 1")
        assert.include(e.message, "differs only in whitespace")
        assert.include(e.message, "No edit was applied")
        assert.strictEqual(readFileSync(fx.at("w.ts"), "utf8"), original)
      })
    )
  )

  it.effect("text pasted with file.read's line-number prefixes gets a hint", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("n.txt", "alpha\nbeta\n")
        const proof = yield* proofOf("n.txt")
        const e = yield* Effect.flip(
          Edit.edit.run({ path: "n.txt", proof, oldText: "1\talpha\n2\tbeta", newText: "x" })
        )
        assert.include((e as Edit.EditFailed).hint ?? "", "line-number prefixes")
      })
    )
  )

  it.effect("identical oldText and newText, and an empty oldText, are refused", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("s.txt", "same\n")
        const proof = yield* proofOf("s.txt")
        const same = yield* Effect.flip(Edit.edit.run({ path: "s.txt", proof, oldText: "same", newText: "same" }))
        assert.strictEqual((same as Edit.EditFailed).reason, "no-change")
        const empty = yield* Effect.flip(Edit.edit.run({ path: "s.txt", proof, oldText: "", newText: "x" }))
        assert.strictEqual((empty as Edit.EditFailed).reason, "empty-old-text")
      })
    )
  )

  it.effect("several edits apply in order: a later edit sees the result of an earlier one", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("m.txt", "one\ntwo\n")
        const proof = yield* proofOf("m.txt")
        const out = yield* Edit.edit.run({
          path: "m.txt",
          proof,
          edits: [
            { oldText: "one", newText: "uno" },
            { oldText: "uno\ntwo", newText: "uno\ndos" }
          ]
        })
        assert.strictEqual(out.replacements, 2)
        assert.strictEqual(readFileSync(fx.at("m.txt"), "utf8"), "uno\ndos\n")
      })
    )
  )

  it.effect("several edits are all or nothing: a failing second edit leaves the file untouched", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("m.txt", "one\ntwo\n")
        const proof = yield* proofOf("m.txt")
        const e = yield* Effect.flip(
          Edit.edit.run({
            path: "m.txt",
            proof,
            edits: [
              { oldText: "one", newText: "uno" },
              { oldText: "three", newText: "tres" }
            ]
          })
        )
        assert.strictEqual((e as Edit.EditFailed).edit, 2)
        assert.include(e.message, "Edit 2 of 2")
        assert.strictEqual(readFileSync(fx.at("m.txt"), "utf8"), "one\ntwo\n")
      })
    )
  )

  it.effect("dryRun returns the diff without writing, publishing or issuing a proof", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "red\n")
        const proof = yield* proofOf("a.txt")
        const seen: Array<unknown> = []
        yield* (yield* Changes.Changes).listen((c) => seen.push(c))
        const out = yield* Edit.edit.run({ path: "a.txt", proof, oldText: "red", newText: "blue", dryRun: true })
        assert.isTrue(out.dryRun)
        assert.include(out.diff, "+blue")
        assert.isUndefined(out.proof)
        assert.deepStrictEqual(seen, [])
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "red\n")
        // The old proof still holds.
        yield* Edit.edit.run({ path: "a.txt", proof, oldText: "red", newText: "blue" })
        assert.strictEqual(seen.length, 1)
      })
    )
  )

  it.effect("a stale proof is refused (changed)", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "v1\n")
        const proof = yield* proofOf("a.txt")
        writeFileSync(fx.at("a.txt"), "v2\n")
        const e = yield* Effect.flip(Edit.edit.run({ path: "a.txt", proof, oldText: "v2", newText: "v3" }))
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "changed")
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "v2\n")
      })
    )
  )

  it.effect("a proof of some lines covers edits inside them and refuses edits outside (not-covering)", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("l.txt", "l1\nl2\nl3\nl4\nl5\n")
        const proof = yield* proofOf("l.txt", { offset: 2, limit: 2 })
        const outside = yield* Effect.flip(Edit.edit.run({ path: "l.txt", proof, oldText: "l4", newText: "L4" }))
        assert.strictEqual((outside as ReadProof.ProofRejected).reason, "not-covering")
        const across = yield* Effect.flip(Edit.edit.run({ path: "l.txt", proof, oldText: "l3\nl4", newText: "x" }))
        assert.strictEqual((across as ReadProof.ProofRejected).reason, "not-covering")
        const out = yield* Edit.edit.run({ path: "l.txt", proof, oldText: "l2\nl3", newText: "a\nb\nc" })
        assert.strictEqual(readFileSync(fx.at("l.txt"), "utf8"), "l1\na\nb\nc\nl4\nl5\n")
        // The fresh proof covers the window moved by the added line, not the whole file.
        assert.deepStrictEqual(out.proof?.coverage, { _tag: "Lines", start: 2, end: 4 })
      })
    )
  )

  it.effect("edits after an earlier edit added lines are checked against the shifted window", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("l.txt", "l1\nl2\nl3\nl4\n")
        const proof = yield* proofOf("l.txt", { offset: 1, limit: 2 })
        // The first edit adds two lines inside the window, so its end moves from 2 to 4.
        const ok = yield* Edit.edit.run({
          path: "l.txt",
          proof,
          dryRun: true,
          edits: [
            { oldText: "l1", newText: "l1\nx\ny" },
            { oldText: "l2", newText: "L2" }
          ]
        })
        assert.strictEqual(ok.replacements, 2)
        const e = yield* Effect.flip(
          Edit.edit.run({
            path: "l.txt",
            proof,
            edits: [
              { oldText: "l1", newText: "l1\nx\ny" },
              { oldText: "l3", newText: "L3" }
            ]
          })
        )
        assert.strictEqual((e as ReadProof.ProofRejected).reason, "not-covering")
      })
    )
  )

  it.effect("text copied from a CRLF file (shown without \\r) matches and keeps the CRLF line endings", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("win.txt", "a\r\nb\r\nc\r\n")
        const proof = yield* proofOf("win.txt")
        yield* Edit.edit.run({ path: "win.txt", proof, oldText: "a\nb", newText: "A\nB" })
        assert.strictEqual(readFileSync(fx.at("win.txt"), "utf8"), "A\r\nB\r\nc\r\n")
      })
    )
  )

  it.effect("both forms at once, or neither, is InvalidInput", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        fx.file("a.txt", "x\n")
        const proof = yield* proofOf("a.txt")
        const both = yield* Effect.flip(
          Edit.edit.run({ path: "a.txt", proof, oldText: "x", newText: "y", edits: [{ oldText: "x", newText: "y" }] })
        )
        assert.strictEqual(both._tag, "InvalidInput")
        const neither = yield* Effect.flip(Edit.edit.run({ path: "a.txt", proof }))
        assert.strictEqual(neither._tag, "InvalidInput")
        const halfSingle = yield* Effect.flip(Edit.edit.run({ path: "a.txt", proof, oldText: "x" }))
        assert.strictEqual(halfSingle._tag, "InvalidInput")
      })
    )
  )

  it.effect("declares its effects: not idempotent, trust 1", () =>
    Effect.sync(() => {
      assert.strictEqual(Edit.edit.trust, 1)
      assert.isTrue(Edit.edit.effects.writesFs)
      assert.isFalse(Edit.edit.effects.idempotent)
    })
  )
})
