/**
 * Threat 46: writers racing with the proof of one version. Every call of a
 * round starts together (unbounded concurrency), so each reads the same bytes
 * and passes the first proof check; only the check under the entry's lock
 * tells them apart.
 */
import { readdirSync, readFileSync, symlinkSync } from "node:fs"
import { dirname } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { ReadProof } from "@ugent/core"
import { Edit, Read, Write } from "@ugent/tools"
import { Effect, Schema } from "effect"
import { lockedEntries } from "../../src/internal/workspace/lock.ts"
import { fixture, toolLayer, withWorkspace } from "../workspace/fixture.ts"

/** Ways to name `a.txt`: as given, folded, absolute, through a file link, through a directory link. */
const spellings = (root: string) => ["a.txt", "./a.txt", `${root}/a.txt`, "sub/../a.txt", "link.txt", "here/a.txt"]

const Op = Schema.Struct({
  kind: Schema.Literals(["edit", "write"]),
  spelling: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 }))
})

describe("concurrent writes (threat 46)", () => {
  it.effect.prop(
    "threat 46: concurrent edits and writes with the proof of one version, under any spelling: exactly one succeeds, the others are ProofRejected (changed), and the file holds the winner's bytes",
    { ops: Schema.Array(Op).check(Schema.isMinLength(2), Schema.isMaxLength(12)) },
    ({ ops }) =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("a.txt", "count: 0\n")
          fx.dir("sub")
          symlinkSync("a.txt", fx.at("link.txt"))
          symlinkSync(".", fx.at("here"))
          const names = spellings(fx.root)
          const { proof } = yield* Read.read.run({ path: "a.txt" })
          const results = yield* Effect.all(
            ops.map((op, i) => {
              const path = names[op.spelling]!
              return Effect.result(
                op.kind === "edit"
                  ? Effect.asVoid(Edit.edit.run({ path, proof, oldText: "count: 0", newText: `count: ${i + 1}` }))
                  : Effect.asVoid(Write.write.run({ path, proof, content: `count: ${i + 1}\n` }))
              )
            }),
            { concurrency: "unbounded" }
          )
          const won = results.flatMap((r, i) => (r._tag === "Success" ? [i] : []))
          assert.strictEqual(won.length, 1, `one success per version, got ${won.length}`)
          for (const r of results) {
            if (r._tag === "Failure") {
              assert.strictEqual(r.failure._tag, "ProofRejected")
              assert.strictEqual((r.failure as ReadProof.ProofRejected).reason, "changed")
            }
          }
          assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), `count: ${won[0]! + 1}\n`)
          assert.deepStrictEqual(readdirSync(fx.root).sort(), ["a.txt", "here", "link.txt", "sub"])
          assert.strictEqual(lockedEntries(), 0, "the lock table is empty once the writers are done")
        })
      ),
    { timeout: 60_000, arbitrary: { runs: 40 } }
  )

  it.live(
    "threat 46: ten concurrent file.edit calls per version, twenty rounds: one success per round, the file holds its change",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          fx.file("a.txt", "count: 0\n")
          for (let round = 0; round < 20; round++) {
            const { proof, content } = yield* Read.read.run({ path: "a.txt" })
            const current = content.split("\t")[1]!
            const results = yield* Effect.all(
              Array.from({ length: 10 }, (_, i) =>
                Effect.result(
                  Edit.edit.run({ path: "a.txt", proof, oldText: current, newText: `count: ${round}.${i}` })
                )
              ),
              { concurrency: "unbounded" }
            )
            const won = results.flatMap((r, i) => (r._tag === "Success" ? [i] : []))
            assert.strictEqual(won.length, 1, `round ${round}: one success per version, got ${won.length}`)
            assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), `count: ${round}.${won[0]}\n`)
          }
        })
      )
  )

  it.live("threat 46: two workspaces over one directory (one through a link to it) share the lock", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fx = yield* fixture
        fx.file("a.txt", "count: 0\n")
        symlinkSync(fx.root, `${dirname(fx.root)}/alias`)
        const one = toolLayer(fx.root)
        const other = toolLayer(`${dirname(fx.root)}/alias`)
        const { proof } = yield* Read.read.run({ path: "a.txt" }).pipe(Effect.provide(one))
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, i) =>
            Effect.result(
              Edit.edit
                .run({ path: "a.txt", proof, oldText: "count: 0", newText: `count: ${i}` })
                .pipe(Effect.provide(i % 2 === 0 ? one : other))
            )
          ),
          { concurrency: "unbounded" }
        )
        const won = results.flatMap((r, i) => (r._tag === "Success" ? [i] : []))
        assert.strictEqual(won.length, 1, `one success per version, got ${won.length}`)
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), `count: ${won[0]}\n`)
      })
    )
  )

  it.live(
    "threat 46: concurrent file.write calls creating one new file: exactly one creates it, the others AlreadyExists",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          for (let round = 0; round < 20; round++) {
            const path = `new/${round}.txt`
            const results = yield* Effect.all(
              Array.from({ length: 10 }, (_, i) =>
                Effect.result(Write.write.run({ path: i % 2 === 0 ? path : `./${path}`, content: `writer ${i}\n` }))
              ),
              { concurrency: "unbounded" }
            )
            const won = results.flatMap((r, i) => (r._tag === "Success" ? [i] : []))
            assert.strictEqual(won.length, 1, `round ${round}: one creator, got ${won.length}`)
            for (const r of results) if (r._tag === "Failure") assert.strictEqual(r.failure._tag, "AlreadyExists")
            assert.strictEqual(readFileSync(fx.at(path), "utf8"), `writer ${won[0]}\n`)
          }
          assert.deepStrictEqual(readdirSync(fx.at("new")).length, 20, "no temporary file is left")
        })
      )
  )
})
