/**
 * The law of approvals bound to bytes, through the real road: `file.write`
 * and `file.edit` served by `Server.layer` (approvals kept in its store),
 * each write asked for under a recipe that requires approval, approved in
 * the store as a person would (`ugent approve`), then made again. An
 * approval never runs other bytes than approved.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "@effect/vitest"
import { Invoke, Recipe, Server } from "@ugent/agentese"
import type { ReadProof } from "@ugent/core"
import { type CausalLaws, Laws } from "@ugent/laws"
import { Read } from "@ugent/tools"
import { ApprovalStore } from "@ugent/wrappers"
import { Clock, Effect, Predicate, Schema } from "effect"

const root = realpathSync(mkdtempSync(join(tmpdir(), "ugent-laws-approvals-")))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const services = Server.layer({ root, stores: "memory", trust: 1, checkpoints: false })

/** Every write waits for a person under this recipe; the laws' other writes run under the server's own. */
const approving: Recipe.Recipe = { requireApproval: ["world.tools.file.write", "world.tools.file.edit"] }

const makeFile = ({ name, content }: { readonly name: string; readonly content: string }) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const path = join(root, name)
      writeFileSync(path, content, "utf8")
      return path
    }),
    (path) => Effect.sync(() => rmSync(path, { force: true }))
  )

const decodeRead = Schema.decodeUnknownEffect(Read.read.output)

/** A call through the road; a refusal fails with its JSON (its `_tag`, its fields). */
const call = (path: string, input: unknown) =>
  Effect.flatMap(Invoke.invoke({ path, input }), (outcome) =>
    outcome.ok ? Effect.succeed(outcome.result) : Effect.fail(outcome.error)
  )

const read = (path: string) =>
  Effect.flatMap(call("world.tools.file.read", { path }), (result) =>
    Effect.map(decodeRead(result), (out) => (out as { readonly proof: ReadProof.ReadProof }).proof)
  )

const approvals = (tool: string, input: (request: CausalLaws.WriteRequest) => unknown) => ({
  request: (request: CausalLaws.WriteRequest) =>
    call(tool, input(request)).pipe(
      Effect.provideService(Recipe.CurrentRecipe, approving),
      Effect.flip,
      Effect.flatMap((error) =>
        Predicate.isTagged(error, "ApprovalPending") && Predicate.hasProperty(error, "id")
          ? Effect.succeed(String(error.id))
          : Effect.fail(error)
      )
    ),
  run: (id: string, request: CausalLaws.WriteRequest) =>
    Effect.gen(function* () {
      const store = yield* ApprovalStore.ApprovalStore
      // The laws run on a test clock: the answer is given at its time, as the road's own clock reads it.
      yield* store.answer(id, "approved", { channel: "law", now: yield* Clock.currentTimeMillis })
      return yield* call(tool, input(request)).pipe(Effect.provideService(Recipe.CurrentRecipe, approving))
    }),
  stale: (error: unknown) => Predicate.isTagged(error, "ApprovalStale")
})

const writeInput = ({ path, proof, content }: CausalLaws.WriteRequest) =>
  proof === undefined ? { path, content } : { path, content, proof: proof.token }

const editInput = ({ path, proof, content, previous }: CausalLaws.WriteRequest) => ({
  path,
  proof: proof?.token,
  oldText: previous,
  newText: content
})

const reasons: Record<CausalLaws.Refusal, ReadonlyArray<string>> = {
  missing: ["never-read"],
  stale: ["changed"],
  forged: ["invalid", "other-file"],
  "other-file": ["other-file"],
  spent: ["changed"]
}

/** The road decodes a proof before the tool runs: a forged one, or none where one is required, is refused as input. */
const rejected = (error: unknown, refusal: CausalLaws.Refusal): boolean =>
  (Predicate.isTagged(error, "ProofRejected") &&
    Predicate.hasProperty(error, "reason") &&
    typeof error.reason === "string" &&
    reasons[refusal].includes(error.reason)) ||
  ((refusal === "forged" || refusal === "missing") &&
    Predicate.isTagged(error, "InvalidInput") &&
    Predicate.hasProperty(error, "issues") &&
    String(error.issues).includes('["proof"]'))

const readProof = (path: string) => read(path) as Effect.Effect<ReadProof.ReadProof, unknown, Invoke.Services>

const fileWrite = {
  makeFile,
  read: readProof,
  write: (request: CausalLaws.WriteRequest) => call("world.tools.file.write", writeInput(request)),
  rejected,
  approve: approvals("world.tools.file.write", writeInput)
}

const fileEdit = {
  makeFile,
  read: readProof,
  write: (request: CausalLaws.WriteRequest) => call("world.tools.file.edit", editInput(request)),
  rejected,
  approve: approvals("world.tools.file.edit", editInput)
}

Laws.causal("file.write through the road, approved", {
  ...fileWrite,
  provide: services,
  runs: 15,
  testTimeout: 120_000
})

Laws.causal("file.edit through the road, approved", { ...fileEdit, provide: services, runs: 15, testTimeout: 120_000 })
