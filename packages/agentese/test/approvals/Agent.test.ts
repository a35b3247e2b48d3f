/**
 * An agent loop whose call waits for a person: the call's result tells the
 * model the request's id and the loop ends; after the approval (given while
 * no server runs), the loop continued from its result's prompt on a new
 * server makes the same call, which runs without asking again.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Agent, Server } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { ApprovalStore } from "@ugent/wrappers"
import { Effect, Layer } from "effect"
import { Prompt } from "effect/ai"

const write = { name: "world_tools_file_write", params: { path: "n.txt", content: "approved bytes\n" }, id: "w1" }

describe("an agent loop waiting on an approval", () => {
  it.live("ends telling the model the request; continued after the approval, its same call runs without asking", () =>
    Effect.gen(function* () {
      const root = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "ugent-agent-approve-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      // Each server is built and closed with its run: the second is a restart on the same store.
      const server = () =>
        Server.layer({ root, stores: "sqlite", trust: 1, recipe: { requireApproval: ["world.tools.file.write"] } })
      const first = yield* Agent.run({ prompt: "Write n.txt." }).pipe(
        Effect.provide(
          Layer.merge(
            Scripted.layer((_, i) =>
              i === 0 ? Scripted.calls([write]) : Scripted.text("It waits for your approval.")
            ),
            server()
          )
        )
      )
      assert.strictEqual(first._tag, "Complete")
      const told = JSON.stringify(first.prompt)
      const id = /ApprovalPending[\s\S]*?pending under (ap-[0-9a-f-]+)/.exec(told)?.[1]
      assert.isString(id, told.slice(0, 2000))
      assert.throws(() => readFileSync(join(root, "n.txt")))
      // A person approves while no server runs.
      yield* Effect.flatMap(ApprovalStore.ApprovalStore, (s) =>
        s.answer(id!, "approved", { channel: "cli", now: Date.now() })
      ).pipe(Effect.provide(ApprovalStore.layerSqlite({ filename: join(root, ".ugent", "ugent.db") })))
      const second = yield* Agent.run({
        prompt: Prompt.concat(first.prompt, Prompt.make("I approved it; go on."))
      }).pipe(
        Effect.provide(
          Layer.merge(
            Scripted.layer((_, i) => (i === 0 ? Scripted.calls([{ ...write, id: "w2" }]) : Scripted.text("Done."))),
            server()
          )
        )
      )
      assert.strictEqual(second._tag, "Complete")
      assert.strictEqual(second.steps[0]!.calls[0]!.outcome?.ok, true, JSON.stringify(second.steps[0]!.calls[0]))
      assert.strictEqual(readFileSync(join(root, "n.txt"), "utf8"), "approved bytes\n")
    })
  )
})
