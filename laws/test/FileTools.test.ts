/**
 * The causal laws over the built-in file tools: `file.write` and `file.edit`
 * of `@ugent/tools`, in a real workspace in a temporary directory, with proofs
 * issued by `file.read`.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "@effect/vitest"
import type { ReadProof } from "@ugent/core"
import { type CausalLaws, Laws } from "@ugent/laws"
import { Edit, Read, Workspace, Write } from "@ugent/tools"
import { Effect } from "effect"

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

Laws.causal("file.write", { ...fileWrite, provide: services, runs: 40, testTimeout: 60_000 })

Laws.causal("file.edit", { ...fileEdit, provide: services, runs: 40, testTimeout: 60_000 })
