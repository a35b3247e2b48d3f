/**
 * The system prompt builder: what it lists follows the caller's offers and
 * the road's settings, and every call it shows parses back, through the
 * road's own parser, to the path it names.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Invoke, Parse, Prompt, type Recipe, Server } from "@ugent/agentese"
import type { Trust } from "@ugent/core"
import { Effect } from "effect"

const root = () =>
  Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "ugent-prompt-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const offersOf = (trust: Trust.TrustLevel, recipe?: Recipe.Recipe) =>
  Effect.flatMap(root(), (dir) =>
    Effect.flatMap(Invoke.Invoker, (road) => road.list).pipe(
      Effect.provide(Server.layer({ root: dir, stores: "memory", trust, recipe }))
    )
  )

const toolLines = (text: string) => text.split("\n").filter((l) => l.startsWith("- world.") || l.startsWith("- self."))

describe("Prompt", () => {
  it.effect("lists exactly the offered paths, each with its level and rules", () =>
    Effect.gen(function* () {
      const recipe: Recipe.Recipe = {
        name: "r",
        allow: ["world.tools.file.*", "self.memory.*"],
        requireApproval: ["world.tools.file.edit"]
      }
      const offers = yield* offersOf(1, recipe)
      const text = Prompt.system({ offers, formats: false })
      assert.deepStrictEqual(
        toolLines(text).map((l) => l.slice(2, l.indexOf(" ", 2))),
        offers.map((o) => o.path).sort()
      )
      const lines = text.split("\n")
      const rulesOf = (path: string) => lines[lines.findIndex((l) => l.startsWith(`- ${path} `)) + 1]!
      assert.match(rulesOf("world.tools.file.read"), /^ {2}L0, read-only\. Input: path \(string, required\), offset/)
      assert.strictEqual(
        rulesOf("world.tools.file.edit").split(". Input")[0],
        "  L1, writes files, read the file first (read before write), each call waits for a person's approval (a denial is final)"
      )
      assert.match(rulesOf("world.tools.file.write"), /content \(string, required\)/)
      assert.include(text, "Read before write:")
      assert.include(text, "self.memory.read {")
      assert.notInclude(text, "Plan mode")
      assert.notInclude(text, "## How to call a tool")
      assert.notInclude(text, "At most")
    }).pipe(Effect.scoped)
  )

  it.effect("says only what applies: no write tool, no memory, no plan mode, the budget and calls given", () =>
    Effect.gen(function* () {
      const offers = yield* offersOf(0, { name: "r", allow: ["world.tools.file.read"] })
      const text = Prompt.system({ offers, budgetTokens: 4000, maxCallsPerResponse: 2 })
      assert.notInclude(text, "Read before write")
      assert.include(text, "a result over about 4,000 tokens is not returned whole: you get a summary")
      assert.include(text, "At most 2 calls in one response")
      const planned = Prompt.system({ offers: yield* offersOf(0), formats: false })
      assert.include(planned, "Plan mode: self.tools.mode.plan")
      assert.include(Prompt.system({ offers: [] }), "No tool is offered to you")
    }).pipe(Effect.scoped)
  )

  it.effect("the formats it shows are the ones the road parses, for every offered path", () =>
    Effect.gen(function* () {
      const offers = yield* offersOf(3)
      for (const offer of offers) {
        const examples = Prompt.examples(offer)
        assert.strictEqual(examples.length, 3)
        const parsed = Parse.response(examples.join("\n"))
        assert.deepStrictEqual(parsed.errors, [], offer.path)
        assert.deepStrictEqual(
          parsed.invocations.map((i) => [i.source, i.steps[0]!.path]),
          [
            ["execute", offer.path],
            ["tool_call", offer.path],
            ["tool_use", offer.path]
          ]
        )
        // The three forms carry the same arguments.
        const [a, b, c] = parsed.invocations.map((i) => i.steps[0]!.args)
        assert.deepStrictEqual(a, b, offer.path)
        assert.deepStrictEqual(b, c, offer.path)
      }
      const text = Prompt.system({ offers })
      const shown = Parse.response(text)
      assert.deepStrictEqual(shown.errors, [])
      assert.deepStrictEqual(
        shown.invocations.map((i) => i.source),
        ["execute", "tool_call", "tool_use"]
      )
    }).pipe(Effect.scoped)
  )

  it.effect("fromRoad takes the offers, the budget and the calls per response of the caller in context", () =>
    Effect.gen(function* () {
      const dir = yield* root()
      const text = yield* Prompt.fromRoad({ formats: false }).pipe(
        Effect.provide(
          Server.layer({
            root: dir,
            stores: "memory",
            budgetTokens: 1234,
            recipe: { name: "r", allow: ["world.tools.git.*"], maxCallsPerResponse: 4 }
          })
        )
      )
      assert.isTrue(toolLines(text).every((l) => l.startsWith("- world.tools.git.")))
      assert.include(text, "about 1,234 tokens")
      assert.include(text, "At most 4 calls")
    }).pipe(Effect.scoped)
  )
})
