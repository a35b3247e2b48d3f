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

describe("Budget per client", () => {
  it("knows each measured client by its clientInfo name, and gives any other the strictest bounds", () => {
    assert.deepStrictEqual(Budget.forClient("claude-code"), { chars: 50_000 })
    // Measured: Codex keeps about 12,000 bytes of a custom provider's model's tool output, head and tail.
    assert.deepStrictEqual(Budget.forClient("Codex-MCP-Client"), { bytes: 11_000 })
    assert.deepStrictEqual(Budget.forClient("gemini-cli-mcp-client"), { chars: 40_000 })
    assert.deepStrictEqual(Budget.forClient("opencode"), { bytes: 51_200, lines: 2_000 })
    assert.strictEqual(Budget.forClient(undefined), Budget.strictest)
    assert.strictEqual(Budget.forClient("cursor"), Budget.strictest)
  })

  it("measures as each client measures: characters, UTF-8 bytes, the content's JSON, lines", () => {
    // 30,000 é: 30,000 characters, 60,000 bytes.
    const accents = "é".repeat(30_000)
    assert.isTrue(Budget.fits(Budget.forClient("claude-code"), accents))
    assert.isFalse(Budget.fits(Budget.forClient("opencode"), accents))
    assert.isTrue(Budget.fits(Budget.forClient("codex-mcp-client"), "é".repeat(5_500)))
    assert.isFalse(Budget.fits(Budget.forClient("codex-mcp-client"), "é".repeat(5_501)))
    // Tabs: one character each, but two bytes once escaped in JSON (and 30 more for the content's frame).
    assert.isTrue(Budget.fits({ jsonBytes: 40_000 }, "\t".repeat(19_980)))
    assert.isFalse(Budget.fits({ jsonBytes: 40_000 }, "\t".repeat(19_990)))
    assert.isFalse(Budget.fits(Budget.forClient("opencode"), "x\n".repeat(2_000)))
    assert.isTrue(Budget.fits(Budget.forClient("opencode"), "x\n".repeat(1_999)))
  })

  it.effect(
    "a page of working memory larger than the limit is cut to the lines that fit, and says where to read on",
    () =>
      Effect.gen(function* () {
        const page = {
          id: "m-1",
          content: Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n"),
          unit: "lines" as const,
          start: 1,
          end: 100,
          total: 300,
          hasMore: true,
          next: 'self.memory.read {"id":"m-1","line":101}'
        }
        const render = (p: Budget.Page) => p.content
        const cut = (yield* Budget.fitPage(page, { chars: 100 }, render, () => Effect.die("not needed"))) as Budget.Page
        assert.isAtMost(cut.content.length, 100)
        assert.strictEqual(cut.end, cut.content.split("\n").length)
        assert.strictEqual(cut.next, `self.memory.read {"id":"m-1","line":${cut.end + 1}}`)
        // One line longer than a page is read by characters, from where it starts in the kept text.
        const long = { ...page, content: "y".repeat(500), start: 7, end: 7 }
        const chars = (yield* Budget.fitPage(long, { chars: 100 }, render, (line) =>
          Effect.succeed({ offset: line * 10, size: 9_000 })
        )) as Budget.Page
        assert.deepStrictEqual(
          { unit: chars.unit, start: chars.start, end: chars.end, total: chars.total, next: chars.next },
          { unit: "chars", start: 70, end: 170, total: 9_000, next: 'self.memory.read {"id":"m-1","offset":170}' }
        )
      })
  )
})
