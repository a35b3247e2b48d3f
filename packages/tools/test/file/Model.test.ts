/**
 * A model-based test of read-before-write. Random sequences of reads,
 * writes, edits and external modifications (the test writes or deletes a
 * file behind the tools' back) run against a real workspace and against a
 * model: a map from file to expected content, and the pool of proofs handed
 * out, each with the content it saw. After every step the disk must equal
 * the model, and every write or edit must succeed or fail exactly as the
 * model predicts: a stale, partial, foreign or forged proof is never
 * accepted, and a fresh one always is.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { ReadProof } from "@ugent/core"
import { Edit, Read, Write } from "@ugent/tools"
import { Effect, Result, Schema } from "effect"
import { type Fixture, fixture, toolLayer } from "../workspace/fixture.ts"

const files = ["f0.txt", "f1.txt", "f2.txt"] as const
const contents = ["", "a\n", "a\nb\n", "b\nb\n", "x $& y\n", "a\nb\nc\nd\n", "c"] as const
const olds = ["a", "b", "b\nb", "x", "$&", "\nc"] as const
const news = ["A", "b", "", "$'", "\n", "a\na"] as const

const FileIx = Schema.Literals([0, 1, 2])
const ProofIx = Schema.Literals([-2, -1, 0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15])
const Command = Schema.Union([
  // A whole read of its own, so that fresh whole proofs are frequent.
  Schema.TaggedStruct("ReadAll", { file: FileIx }),
  Schema.TaggedStruct("Read", {
    file: FileIx,
    // 0 and 1 both start at line 1; -1 and -2 both mean "no limit": whole reads are common.
    offset: Schema.Literals([0, 1, 2, 3]),
    limit: Schema.Literals([-2, -1, 0, 1, 2])
  }),
  Schema.TaggedStruct("Write", { file: FileIx, content: Schema.Literals([0, 1, 2, 3, 4, 5, 6]), proof: ProofIx }),
  Schema.TaggedStruct("Edit", {
    file: FileIx,
    proof: ProofIx,
    old: Schema.Literals([0, 1, 2, 3, 4, 5]),
    new: Schema.Literals([0, 1, 2, 3, 4, 5]),
    replaceAll: Schema.Boolean
  }),
  Schema.TaggedStruct("External", { file: FileIx, content: Schema.Literals([-1, 0, 1, 2, 3, 4, 5, 6]) })
])
type Command = typeof Command.Type
const Commands = Schema.Array(Command).check(Schema.isMinLength(12), Schema.isMaxLength(40))

interface Issued {
  readonly proof: ReadProof.ReadProof
  readonly file: number
  /** The content the proof saw. */
  readonly saw: string
  readonly coverage: ReadProof.Coverage
}

/** `ok`, or the tag (and reason) of the failure the model predicts. */
interface Expected {
  readonly _tag: string
  readonly reason?: string
}

const countLines = (s: string) => (s === "" ? 0 : s.split("\n").length - (s.endsWith("\n") ? 1 : 0))
const lineOf = (s: string, index: number) => s.slice(0, index).split("\n").length

/** Every start index of `needle`, overlapping ones included. */
const allIndices = (s: string, needle: string) => {
  const out: Array<number> = []
  for (let i = 0; i + needle.length <= s.length; i++) if (s.startsWith(needle, i)) out.push(i)
  return out
}

const run = (fx: Fixture, commands: ReadonlyArray<Command>) =>
  Effect.gen(function* () {
    const model: Array<string | undefined> = ["a\nb\n", "b\nb\n", undefined]
    for (const [i, content] of model.entries()) if (content !== undefined) writeFileSync(fx.at(files[i]!), content)
    const pool: Array<Issued> = []
    let accepted = 0

    // -2 forged, -1 none; 0, 2 to 5 the latest proof of the same file (so fresh proofs are common); 1 the latest of
    // any file; 10 and more: the proof at that position of the pool (counting from 10, wrapping).
    const pick = (ix: number, file: number): Issued | "none" | "forged" => {
      if (ix === -2) return "forged"
      const chosen =
        ix === -1
          ? undefined
          : ix === 1
            ? pool.at(-1)
            : ix >= 10
              ? pool[(ix - 10) % Math.max(pool.length, 1)]
              : pool.findLast((p) => p.file === file)
      return chosen ?? "none"
    }
    const forgedFor = (file: number) =>
      // Every field right, including the hash of what is on disk: only the brand and the signature are missing.
      ({
        path: fx.at(files[file]!),
        hash: ReadProof.hash(model[file] ?? ""),
        size: 0,
        coverage: { _tag: "Whole" },
        issuedAt: 0,
        token: "rp1.e30.AAAA"
      }) as unknown as ReadProof.ReadProof

    const check = <A>(what: string, result: Result.Result<A, unknown>, expected: Expected) => {
      seen.add(expected.reason ?? expected._tag)
      if (expected._tag === "ok") {
        assert.isTrue(Result.isSuccess(result), `${what}: expected success, got ${JSON.stringify(result)}`)
        accepted++
        return
      }
      assert.isTrue(Result.isFailure(result), `${what}: expected ${expected._tag}/${expected.reason}, got success`)
      if (Result.isFailure(result)) {
        const failure = result.failure as { readonly _tag: string; readonly reason?: string }
        assert.strictEqual(failure._tag, expected._tag, what)
        if (expected.reason !== undefined) assert.strictEqual(failure.reason, expected.reason, what)
      }
    }

    for (const [step, command] of commands.entries()) {
      const what = `step ${step} ${JSON.stringify(command)}`
      const current = model[command.file]
      switch (command._tag) {
        case "ReadAll":
        case "Read": {
          const offset = command._tag === "Read" ? command.offset : 0
          const limitGiven = command._tag === "Read" ? command.limit : -1
          const input = {
            path: files[command.file]!,
            ...(offset === 0 ? {} : { offset }),
            ...(limitGiven < 0 ? {} : { limit: limitGiven })
          }
          const r = yield* Effect.result(Read.read.run(input))
          if (current === undefined) {
            check(what, r, { _tag: "NotFound" })
            break
          }
          assert.isTrue(Result.isSuccess(r), what)
          if (Result.isSuccess(r)) {
            const total = countLines(current)
            const start = offset === 0 ? 1 : offset
            const limit = limitGiven < 0 ? 2000 : limitGiven
            const end = start + Math.max(0, Math.min(limit, total - start + 1)) - 1
            const coverage: ReadProof.Coverage =
              start === 1 && end === total ? { _tag: "Whole" } : { _tag: "Lines", start, end }
            assert.deepStrictEqual(r.success.proof.coverage, coverage, what)
            assert.strictEqual(r.success.totalLines, total, what)
            pool.push({ proof: r.success.proof, file: command.file, saw: current, coverage })
          }
          break
        }
        case "Write": {
          const content = contents[command.content]!
          const chosen = pick(command.proof, command.file)
          const proof = chosen === "none" ? undefined : chosen === "forged" ? forgedFor(command.file) : chosen.proof
          const r = yield* Effect.result(
            Write.write.run({ path: files[command.file]!, content, ...(proof === undefined ? {} : { proof }) })
          )
          let expected: Expected
          if (chosen === "forged") expected = { _tag: "ProofRejected", reason: "invalid" }
          else if (current === undefined) {
            expected =
              chosen === "none"
                ? { _tag: "ok" }
                : { _tag: "ProofRejected", reason: chosen.file === command.file ? "deleted" : "other-file" }
          } else if (chosen === "none") expected = { _tag: "ProofRejected", reason: "never-read" }
          else if (chosen.file !== command.file) expected = { _tag: "ProofRejected", reason: "other-file" }
          else if (chosen.coverage._tag !== "Whole") expected = { _tag: "ProofRejected", reason: "partial" }
          else if (chosen.saw !== current) expected = { _tag: "ProofRejected", reason: "changed" }
          else expected = { _tag: "ok" }
          check(what, r, expected)
          if (expected._tag === "ok" && Result.isSuccess(r)) {
            model[command.file] = content
            pool.push({ proof: r.success.proof, file: command.file, saw: content, coverage: { _tag: "Whole" } })
          }
          break
        }
        case "Edit": {
          const oldText = olds[command.old]!
          const newText = news[command.new]!
          const chosen = pick(command.proof, command.file)
          if (chosen === "none") break
          const proof = chosen === "forged" ? forgedFor(command.file) : chosen.proof
          const r = yield* Effect.result(
            Edit.edit.run({ path: files[command.file]!, proof, oldText, newText, replaceAll: command.replaceAll })
          )
          let expected: Expected
          let next: string | undefined
          if (chosen === "forged") expected = { _tag: "ProofRejected", reason: "invalid" }
          else if (chosen.file !== command.file) expected = { _tag: "ProofRejected", reason: "other-file" }
          else if (current === undefined) expected = { _tag: "ProofRejected", reason: "deleted" }
          else if (chosen.saw !== current) expected = { _tag: "ProofRejected", reason: "changed" }
          else if (oldText === newText) expected = { _tag: "EditFailed", reason: "no-change" }
          else {
            const at = allIndices(current, oldText)
            const span = (i: number) => [lineOf(current, i), lineOf(current, i + oldText.length - 1)] as const
            const covered = at.every((i) => {
              const [s, e] = span(i)
              return chosen.coverage._tag === "Whole" || (chosen.coverage.start <= s && e <= chosen.coverage.end)
            })
            if (at.length === 0) expected = { _tag: "EditFailed", reason: "not-found" }
            else if (at.length > 1 && !command.replaceAll) expected = { _tag: "EditFailed", reason: "ambiguous" }
            else if (!covered) expected = { _tag: "ProofRejected", reason: "not-covering" }
            else {
              expected = { _tag: "ok" }
              next = command.replaceAll
                ? current.split(oldText).join(newText)
                : current.slice(0, at[0]!) + newText + current.slice(at[0]! + oldText.length)
            }
          }
          check(what, r, expected)
          if (next !== undefined && Result.isSuccess(r) && r.success.proof !== undefined) {
            model[command.file] = next
            const fresh = r.success.proof
            pool.push({ proof: fresh, file: command.file, saw: next, coverage: fresh.coverage })
          }
          break
        }
        case "External": {
          const path = fx.at(files[command.file]!)
          if (command.content === -1) {
            rmSync(path, { force: true })
            model[command.file] = undefined
          } else {
            writeFileSync(path, contents[command.content]!)
            model[command.file] = contents[command.content]!
          }
          break
        }
      }
      // No accepted write lost bytes it should have kept, and no refused one wrote any.
      for (const [i, expected] of model.entries()) {
        let disk: string | undefined
        try {
          disk = readFileSync(fx.at(files[i]!), "utf8")
        } catch {
          disk = undefined
        }
        assert.strictEqual(disk, expected, `${what}: ${files[i]} on disk`)
      }
    }
    return accepted
  })

const stats = { runs: 0, accepted: 0 }
/** Every verdict the model predicted, over all runs. */
const seen = new Set<string>()

describe("read-before-write (model-based)", () => {
  afterAll(() => {
    // The generator must reach the interesting states: many runs accept writes, not only refusals.
    assert.isAbove(stats.accepted, stats.runs / 2)
    const verdicts = ["ok", "NotFound", "never-read", "invalid", "other-file", "partial", "changed", "deleted"]
    const edits = ["not-covering", "not-found", "ambiguous", "no-change"]
    for (const v of [...verdicts, ...edits]) assert.isTrue(seen.has(v), `no run reached the verdict ${v}`)
  })

  it.effect.prop(
    "random reads, writes, edits and external changes: stale or forged proofs are never accepted, no bytes are lost",
    { commands: Commands },
    ({ commands }) =>
      Effect.scoped(
        Effect.gen(function* () {
          const fx = yield* fixture
          const accepted = yield* run(fx, commands).pipe(Effect.provide(toolLayer(fx.root)))
          stats.runs++
          stats.accepted += accepted
        })
      ),
    { timeout: 120_000, arbitrary: { runs: 200 } }
  )

  // The random runs rarely draw an edit whose old and new text are the same; this scenario reaches every verdict.
  it.effect("a fixed scenario exercises every verdict", () =>
    Effect.gen(function* () {
      const fx = yield* fixture
      const script: ReadonlyArray<Command> = [
        { _tag: "Read", file: 0, offset: 0, limit: -1 }, // pool 0: f0 whole
        { _tag: "Write", file: 0, content: 5, proof: 10 }, // ok; pool 1
        { _tag: "Read", file: 1, offset: 2, limit: 1 }, // pool 2: f1 line 2
        { _tag: "Write", file: 1, content: 1, proof: 12 }, // partial
        { _tag: "Edit", file: 1, proof: 12, old: 1, new: 0, replaceAll: false }, // ambiguous
        { _tag: "Edit", file: 1, proof: 12, old: 2, new: 0, replaceAll: false }, // not-covering
        { _tag: "External", file: 0, content: 2 },
        { _tag: "Edit", file: 0, proof: 11, old: 0, new: 0, replaceAll: false }, // changed
        { _tag: "Read", file: 0, offset: 0, limit: -1 }, // pool 3
        { _tag: "Edit", file: 0, proof: 13, old: 0, new: 0, replaceAll: false }, // ok; pool 4
        { _tag: "Edit", file: 0, proof: 14, old: 3, new: 0, replaceAll: false }, // not-found
        { _tag: "Edit", file: 0, proof: 14, old: 1, new: 1, replaceAll: false }, // no-change
        { _tag: "Write", file: 2, content: 3, proof: -1 }, // ok (create); pool 5
        { _tag: "Write", file: 0, content: 1, proof: -2 }, // invalid
        { _tag: "Write", file: 1, content: 1, proof: 14 }, // other-file
        { _tag: "External", file: 2, content: -1 },
        { _tag: "Edit", file: 2, proof: 15, old: 1, new: 0, replaceAll: true }, // deleted
        { _tag: "Write", file: 1, content: 0, proof: -1 } // never-read
      ]
      const accepted = yield* run(fx, script).pipe(Effect.provide(toolLayer(fx.root)))
      assert.strictEqual(accepted, 3)
    })
  )
})
