/**
 * The causal laws over the built-in file tools: `file.write` and `file.edit`
 * of `@ugent/tools`, in a real workspace in a temporary directory that keeps
 * checkpoints, with proofs issued by `file.read` (and restore after write is
 * identity on an unchanged file).
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "@effect/vitest"
import type { ReadProof } from "@ugent/core"
import { type CausalLaws, Laws } from "@ugent/laws"
import { Checkpoints, Edit, Read, Workspace, Write } from "@ugent/tools"
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

const services = Workspace.layer({ root, checkpoints: {} })

/** Restores the newest checkpoint that changed the file: takes back its newest write. */
const undo = (path: string) =>
  Effect.gen(function* () {
    const ws = yield* Workspace.Workspace
    const relative = ws.relative(path)
    const newest = (yield* Checkpoints.list).find((c) => c.files.some((f) => f.path === relative))
    if (newest === undefined || ws.checkpoints === undefined) return yield* Effect.fail(`no checkpoint of ${path}`)
    return yield* ws.checkpoints.restore(newest.id)
  })

const fileWrite = {
  makeFile,
  read,
  write: ({ path, proof, content }: CausalLaws.WriteRequest) =>
    Write.write.run(proof === undefined ? { path, content } : { path, content, proof }),
  proofOf,
  undo
}

const fileEdit = {
  makeFile,
  read,
  // The typed input requires a proof; "no proof" is what a caller that skips the type check sends.
  write: ({ path, proof, content, previous }: CausalLaws.WriteRequest) =>
    Edit.edit.run({ path, proof: proof as ReadProof.ReadProof, oldText: previous, newText: content }),
  proofOf,
  undo
}

Laws.causal("file.write", { ...fileWrite, provide: services, runs: 40, testTimeout: 60_000 })

Laws.causal("file.edit", { ...fileEdit, provide: services, runs: 40, testTimeout: 60_000 })
