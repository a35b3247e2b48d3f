/**
 * The causal laws over the built-in file tools: `file.write` and `file.edit`
 * of `@ugent/tools`, in a real workspace in a temporary directory, with proofs
 * issued by `file.read`.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { type ReadProof, Trust } from "@ugent/core"
import { type CausalLaws, CausalTests, Laws, Report, RuleSet } from "@ugent/laws"
import { Edit, Read, Workspace, Write } from "@ugent/tools"
import { Effect, Layer } from "effect"

const root = realpathSync(mkdtempSync(join(tmpdir(), "ugent-laws-files-")))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const makeFile = ({ name, content }: { readonly name: string; readonly content: string }) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const path = join(root, name)
      writeFileSync(path, content, "utf8")
      return path
    }),
    (path) => Effect.sync(() => rmSync(path, { force: true }))
  )

const read = (path: string) => Effect.map(Read.read.run({ path }), (out) => out.proof)
const proofOf = (result: unknown) => (result as { readonly proof?: ReadProof.ReadProof }).proof

const services = Workspace.layer({ root })

// Every forgery but "transplanted", which both tools accept today: see the known-weakness tests below.
const forgeries = ["literal", "tampered", "foreign"] as const

const fileWrite = {
  makeFile,
  read,
  write: ({ path, proof, content }: CausalLaws.WriteRequest) =>
    Write.write.run(proof === undefined ? { path, content } : { path, content, proof }),
  proofOf
}

const fileEdit = {
  makeFile,
  read,
  // The typed input requires a proof; "no proof" is what a caller that skips the type check sends.
  write: ({ path, proof, content, previous }: CausalLaws.WriteRequest) =>
    Edit.edit.run({ path, proof: proof as ReadProof.ReadProof, oldText: previous, newText: content }),
  proofOf
}

Laws.causal("file.write", { ...fileWrite, forgeries, provide: services, runs: 40, testTimeout: 60_000 })

Laws.causal("file.edit", { ...fileEdit, forgeries, provide: services, runs: 40, testTimeout: 60_000 })

// A proof object carrying file A's fields and file B's genuine token passes `ReadProof.isReadProof` (which
// verifies the token only), and the tools then trust the fields. These tests pin that weakness: they fail
// when it is fixed (in core's isReadProof, or in the tools' checkProofFor by using the token's payload);
// then drop them and the `forgeries` restriction above.
describe("known weakness: a transplanted proof", () => {
  const transplanted = (options: CausalTests.CausalOptions<Workspace.Workspace | Trust.Capability>) =>
    Effect.gen(function* () {
      const rules = CausalTests.causal({ ...options, forgeries: ["transplanted"] })
      const forged = RuleSet.laws(rules).find((l) => l.law.name === "a forged proof fails")!
      const report = yield* RuleSet.checkLaw("transplanted", "causal", forged.law, {
        provide: Layer.merge(services, Trust.grant(1)),
        seed: 1,
        runs: 20
      })
      assert.strictEqual(report._tag, "Falsified", Report.format(report))
      assert.include(Report.format(report), "the write succeeded")
    })

  it.effect("file.write accepts it today", () => transplanted(fileWrite))
  it.effect("file.edit accepts it today", () => transplanted(fileEdit))
})
