/**
 * Threat 46 over HTTP: concurrent `POST /v1/invoke` edits carrying the token
 * of one read. The lock lives in the workspace, under every projection.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { invokeUrl, post, serve } from "./fixture.ts"

describe("Http: concurrent writes", () => {
  it.live(
    "threat 46: ten concurrent file.edit POSTs with the proof of one version: one 200, nine 409 ProofRejected",
    () =>
      Effect.gen(function* () {
        const { url, root } = yield* serve({ trust: 1 })
        for (let round = 0; round < 5; round++) {
          const read = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
          assert.strictEqual(read.status, 200)
          const { proof, content } = read.body.result
          const current = String(content).split("\n")[0]!.split("\t")[1]!
          const replies = yield* Effect.all(
            Array.from({ length: 10 }, (_, i) =>
              post(invokeUrl(url, "world.tools.file.edit"), {
                path: "a.txt",
                proof,
                oldText: current,
                newText: `edit ${round}.${i}`
              })
            ),
            { concurrency: "unbounded" }
          )
          const won = replies.flatMap((r, i) => (r.status === 200 ? [i] : []))
          assert.strictEqual(won.length, 1, `round ${round}: one 200 per version, got ${won.length}`)
          for (const r of replies) {
            if (r.status === 200) continue
            assert.strictEqual(r.status, 409)
            assert.strictEqual(r.body.error._tag, "ProofRejected")
            assert.strictEqual(r.body.error.reason, "changed")
          }
          assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), `edit ${round}.${won[0]}\nbeta\n`)
        }
      })
  )

  it.live("threat 46: ten concurrent file.write POSTs with the proof of one version: one 200, nine 409", () =>
    Effect.gen(function* () {
      const { url, root } = yield* serve({ trust: 1 })
      const read = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "b.md" })
      const replies = yield* Effect.all(
        Array.from({ length: 10 }, (_, i) =>
          post(invokeUrl(url, "world.tools.file.write"), {
            path: i % 2 === 0 ? "b.md" : `${root}/b.md`,
            proof: read.body.result.proof,
            content: `writer ${i}\n`
          })
        ),
        { concurrency: "unbounded" }
      )
      const won = replies.flatMap((r, i) => (r.status === 200 ? [i] : []))
      assert.strictEqual(won.length, 1, `one 200 per version, got ${won.length}`)
      for (const r of replies) if (r.status !== 200) assert.strictEqual(r.body.error._tag, "ProofRejected")
      assert.strictEqual(readFileSync(join(root, "b.md"), "utf8"), `writer ${won[0]}\n`)
    })
  )
})
