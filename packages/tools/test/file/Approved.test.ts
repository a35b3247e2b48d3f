/**
 * A write made for an approved call checks, under the file's lock and just
 * before its rename, that the file holds the bytes the person approved the
 * call against (`Workspace.ApprovedFiles`): a proof taken after the file
 * changed does not carry the write past the approval.
 */
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Edit, Read, Workspace, Write } from "@ugent/tools"
import { Effect } from "effect"
import { withWorkspace } from "../workspace/fixture.ts"

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

describe("writes of an approved call", () => {
  it.effect(
    "threat: a file changed after its edit was approved is not overwritten, even with a proof read after the change",
    () =>
      withWorkspace((fx) =>
        Effect.gen(function* () {
          writeFileSync(fx.at("a.txt"), "alpha\n")
          const approved = new Map([["a.txt", sha256("alpha\n")]])
          // A person changes the file after approving; the agent reads it again and edits with the fresh proof.
          writeFileSync(fx.at("a.txt"), "alpha\nmore\n")
          const read = yield* Read.read.run({ path: "a.txt" })
          const refused = yield* Effect.flip(
            Edit.edit
              .run({ path: "a.txt", proof: read.proof, oldText: "alpha", newText: "ALPHA" })
              .pipe(Effect.provideService(Workspace.ApprovedFiles, approved))
          )
          assert.strictEqual(refused._tag, "ChangedSinceApproval")
          assert.match(refused.message, /changed after this call was approved/)
          assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "alpha\nmore\n")
        })
      )
  )

  it.effect("threat: a file approved as present and gone since is not created anew", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        writeFileSync(fx.at("taken.txt"), "theirs\n")
        const overTaken = yield* Effect.flip(
          Write.write
            .run({ path: "gone.txt", content: "mine\n" })
            .pipe(Effect.provideService(Workspace.ApprovedFiles, new Map([["gone.txt", sha256("was here\n")]])))
        )
        assert.strictEqual(overTaken._tag, "ChangedSinceApproval")
        assert.throws(() => readFileSync(fx.at("gone.txt")))
      })
    )
  )

  it.effect("the approved bytes, unchanged, are written; files the approval does not name are not checked", () =>
    withWorkspace((fx) =>
      Effect.gen(function* () {
        writeFileSync(fx.at("a.txt"), "alpha\n")
        const read = yield* Read.read.run({ path: "a.txt" })
        yield* Edit.edit
          .run({ path: "a.txt", proof: read.proof, oldText: "alpha", newText: "ALPHA" })
          .pipe(Effect.provideService(Workspace.ApprovedFiles, new Map([["a.txt", sha256("alpha\n")]])))
        assert.strictEqual(readFileSync(fx.at("a.txt"), "utf8"), "ALPHA\n")
        yield* Write.write
          .run({ path: "other.txt", content: "x" })
          .pipe(Effect.provideService(Workspace.ApprovedFiles, new Map([["a.txt", sha256("nothing")]])))
        assert.strictEqual(readFileSync(fx.at("other.txt"), "utf8"), "x")
      })
    )
  )
})
