/**
 * Servers of different workspaces may share one approval store (one
 * PostgreSQL): each lists and answers only its own workspace's requests. A
 * request is recognised by its key, made again with the server's root.
 * Skipped (and said) without UGENT_PG_URL, except under CI.
 */
import { realpathSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { ApprovalStore } from "@ugent/wrappers"
import { Effect } from "effect"
import { keyOf } from "../../src/road/Approval.ts"
import { ugent, workspace } from "../cli/fixture.ts"

const pg = process.env.UGENT_PG_URL
const ci = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false"
const skip = pg === undefined && !ci
if (skip) console.warn("approval workspaces: skipped: UGENT_PG_URL not set (run .ci/services.sh)")

describe("approvals of several workspaces on one store", () => {
  it.skipIf(skip)(
    "threat: a server of another workspace sharing the store neither lists nor answers this workspace's requests",
    { timeout: 60_000 },
    async () => {
      const mine = workspace()
      const theirs = workspace()
      const id = `ap-${Date.now().toString(16).slice(-8)}-ws`
      const input = { path: "a.txt", content: `only ${id}\n` }
      await Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(ApprovalStore.ApprovalStore, (store) =>
            store.create({
              id,
              key: keyOf(realpathSync(mine), "world.tools.file.write", "local", input),
              tool: "world.tools.file.write",
              observerId: "local",
              input,
              arguments: 'path: "a.txt"',
              text: "local asks to run world.tools.file.write",
              files: [{ path: "a.txt", hash: null }],
              status: "pending",
              createdAt: Date.now(),
              expiresAt: Date.now() + 600_000
            })
          ).pipe(Effect.provide(ApprovalStore.layerPg({ url: pg! })))
        )
      )
      const listed = async (root: string) => {
        const r = await ugent(["approve", "--root", root, "--stores", pg!, "--json"], { cwd: root })
        assert.strictEqual(r.code, 0, r.stderr)
        return (JSON.parse(r.stdout).pending as Array<{ id: string }>).map((a) => a.id)
      }
      assert.notInclude(await listed(theirs), id)
      assert.include(await listed(mine), id)
      const refused = await ugent(["approve", id, "--root", theirs, "--stores", pg!], { cwd: theirs })
      assert.notStrictEqual(refused.code, 0)
      assert.match(refused.stderr, /UnknownApproval/)
      const approved = await ugent(["approve", id, "--root", mine, "--stores", pg!], { cwd: mine })
      assert.strictEqual(approved.code, 0, approved.stderr)
      assert.match(approved.stdout, /Approved/)
    }
  )
})
