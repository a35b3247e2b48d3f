/**
 * The result budget keeps a result over it in working memory once: the same
 * text kept again for the same caller and path is the same entry.
 */
import { assert, describe, it } from "@effect/vitest"
import { Budget } from "@ugent/agentese"
import { MemoryStore } from "@ugent/wrappers"
import { Effect } from "effect"

const big = (n: number) => ({ content: `line ${n}\n`.repeat(2000), totalLines: 2000 })

const keep = (encoded: unknown, owner: string, path = "world.tools.file.read") =>
  Effect.flatMap(MemoryStore.MemoryStore, (memory) =>
    Effect.map(
      Budget.apply({
        path,
        encoded,
        text: JSON.stringify(encoded),
        budgetTokens: 100,
        memory,
        owner,
        present: { summary: "Read 2000 lines from a.txt" }
      }),
      (over) => over!.memoryId
    )
  )

describe("Budget", () => {
  it.effect("the same result kept twice by one caller is one entry; another caller or text is another", () =>
    Effect.gen(function* () {
      const memory = yield* MemoryStore.MemoryStore
      const first = yield* keep(big(1), "agent-a")
      const again = yield* keep(big(1), "agent-a")
      assert.strictEqual(again, first)
      assert.lengthOf(yield* memory.list({ owner: "agent-a", limit: 10 }), 1)
      assert.notStrictEqual(yield* keep(big(1), "agent-b"), first)
      assert.notStrictEqual(yield* keep(big(2), "agent-a"), first)
      assert.notStrictEqual(yield* keep(big(1), "agent-a", "world.tools.git.diff"), first)
      const lines = yield* memory.getLines(first, { start: 1, count: 1 })
      assert.strictEqual(lines.content, "line 1")
    }).pipe(Effect.provide(MemoryStore.layerMemory()))
  )

  it.effect("an entry deleted since is kept again, under the same id", () =>
    Effect.gen(function* () {
      const memory = yield* MemoryStore.MemoryStore
      const first = yield* keep(big(3), "agent-a")
      assert.isTrue(yield* memory.delete(first))
      const again = yield* keep(big(3), "agent-a")
      assert.strictEqual(again, first)
      assert.strictEqual((yield* memory.info(again)).size, big(3).content.length)
    }).pipe(Effect.provide(MemoryStore.layerMemory()))
  )
})
