/**
 * The client's own ids of its calls (Claude Code's tool-use id, Codex's
 * thread and turn, sent in a call's `_meta`) are kept in our trace and audit
 * rows, so an operator can join the client's records with ours; in the
 * SQLite store too, whose tables gain the column.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@ugent/agentese"
import { AuditStore, TraceStore } from "@ugent/wrappers"
import { Effect } from "effect"
import { afterAll } from "vitest"
import { clientCallIdOf } from "../../src/internal/mcp/server.ts"
import { memoryClient } from "./fixtures/memory.ts"

const root = mkdtempSync(join(tmpdir(), "ugent-call-ids-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("the client's call ids in our records (issue 27)", () => {
  it("are read from what each client sends, printable and bounded", () => {
    assert.strictEqual(clientCallIdOf({ "claudecode/toolUseId": "toolu_01ABC", progressToken: 3 }), "toolu_01ABC")
    assert.strictEqual(
      clientCallIdOf({ "x-codex-turn-metadata": JSON.stringify({ thread_id: "th-1", turn_id: "tu-2" }) }),
      "thread=th-1 turn=tu-2"
    )
    assert.strictEqual(
      clientCallIdOf({ "x-codex-turn-metadata": { session_id: "s-1", turn_id: "tu-3" } }),
      "thread=s-1 turn=tu-3"
    )
    assert.strictEqual(clientCallIdOf({ "claudecode/toolUseId": "toolu\n\u001b[31mX" }), "toolu[31mX")
    assert.lengthOf(clientCallIdOf({ "claudecode/toolUseId": "x".repeat(5000) })!, 200)
    assert.isUndefined(clientCallIdOf({ progressToken: 1 }))
    assert.isUndefined(clientCallIdOf(undefined))
  })

  it.live("are kept in the trace and both audit entries of the call, in the SQLite store", () =>
    Effect.gen(function* () {
      const { client } = yield* memoryClient({ clientName: "claude-code" })
      yield* Effect.promise(() =>
        client.callTool({
          name: "world_tools_file_list",
          arguments: { path: "." },
          _meta: { "claudecode/toolUseId": "toolu_01JOIN" }
        })
      )
      yield* Effect.promise(() =>
        client.callTool({
          name: "world_tools_file_glob",
          arguments: { pattern: "*" },
          _meta: { "x-codex-turn-metadata": { thread_id: "th-9", turn_id: "tu-9" } }
        })
      )
      yield* Effect.promise(() => client.callTool({ name: "world_tools_file_list", arguments: { path: "." } }))
      const traces = yield* (yield* TraceStore.TraceStore).recent({ limit: 10 })
      assert.deepStrictEqual(traces.map((t) => [t.path, t.clientCallId]).reverse(), [
        ["world.tools.file.list", "toolu_01JOIN"],
        ["world.tools.file.glob", "thread=th-9 turn=tu-9"],
        ["world.tools.file.list", undefined]
      ])
      const audit = yield* (yield* AuditStore.AuditStore).list({ limit: 100 })
      const joined = audit.filter((e) => e.clientCallId === "toolu_01JOIN").map((e) => e.phase)
      assert.deepStrictEqual(joined.sort(), ["after", "before"])
    }).pipe(Effect.scoped, Effect.provide(Server.layer({ root, stores: "sqlite" })))
  )
})
