/**
 * Working memory as a server serves it: a file read over the budget is kept
 * with the file's hash, and a read of it after the file changed (or went)
 * says so and offers the fresh read; `self.memory.delete` forgets an entry.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Invoke, Server } from "@ugent/agentese"
import { Effect } from "effect"

const call = (path: string, input: unknown) => Invoke.invoke({ path, input })
const okResult = <A>(o: Invoke.Outcome): A => {
  if (!o.ok) throw new Error(JSON.stringify(o.error))
  return o.result as A
}

const big = `${"a line of the file\n".repeat(2000)}`

describe("self.memory", () => {
  it.effect(
    "an entry kept from a file says, when read after the file changed or went, that it is stale and how to read it afresh",
    () => {
      const root = mkdtempSync(join(tmpdir(), "ugent-memory-"))
      writeFileSync(join(root, "big.txt"), big)
      return Effect.gen(function* () {
        const over = okResult<{ memoryId: string }>(yield* call("world.tools.file.read", { path: "big.txt" }))
        const fresh = okResult<Record<string, unknown>>(
          yield* call("self.memory.read", { id: over.memoryId, line: 1, lines: 2 })
        )
        assert.strictEqual(fresh.content, "1\ta line of the file\n2\ta line of the file")
        assert.isFalse("stale" in fresh)
        writeFileSync(join(root, "big.txt"), `${big}one more\n`)
        const stale = okResult<{ stale: unknown }>(
          yield* call("self.memory.read", { id: over.memoryId, line: 1, lines: 2 })
        )
        assert.deepStrictEqual(stale.stale, {
          path: "big.txt",
          reason: "changed",
          next: 'world.tools.file.read {"path":"big.txt"}'
        })
        rmSync(join(root, "big.txt"))
        const gone = okResult<{ stale: unknown }>(yield* call("self.memory.read", { id: over.memoryId }))
        assert.deepStrictEqual(gone.stale, { path: "big.txt", reason: "deleted" })
        const listed = okResult<{ entries: ReadonlyArray<{ id: string; source?: string; expiresAt?: number }> }>(
          yield* call("self.memory.list", {})
        )
        assert.strictEqual(listed.entries[0]!.source, "big.txt")
        assert.isNumber(listed.entries[0]!.expiresAt)
        okResult(yield* call("self.memory.delete", { id: over.memoryId }))
        const after = yield* call("self.memory.read", { id: over.memoryId })
        assert.isFalse(after.ok)
        assert.strictEqual(!after.ok && after.error._tag, "MemoryNotFound")
      }).pipe(
        Effect.provide(Server.layer({ root, stores: "memory", trust: 1, budgetTokens: 2000 })),
        Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
      )
    }
  )
})
