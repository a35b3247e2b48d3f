import { assert, describe, it } from "@effect/vitest"
import { Catalog, Recipe, Registry } from "@ugent/agentese"
import { Family, Tool } from "@ugent/core"
import { Context, Effect, Schema } from "effect"

/** A string schema that counts how often its JSON Schema is made. */
const counted = () => {
  const made = { count: 0 }
  const schema = Schema.String.check(
    Schema.makeFilter(() => true, {
      toJsonSchema: () => {
        made.count++
        return {}
      }
    })
  )
  return { made, schema }
}

describe("Registry descriptions", () => {
  it("make output and failure schemas on their first read, once, and a listing never reads them", () => {
    const input = counted()
    const output = counted()
    const echo = Tool.make({
      name: "echo",
      description: "Echoes.",
      input: Schema.Struct({ text: input.schema }),
      output: Schema.Struct({ text: output.schema }),
      failure: Schema.Never,
      run: ({ text }) => Effect.succeed({ text })
    })
    const registry = Registry.make([
      { path: "world.tools.echo", family: "echo", tool: Family.close(echo, Context.empty()) }
    ])
    const entry = registry.get("world.tools.echo")!

    const offers = Catalog.offers(registry, { id: "a", trust: 0 }, Recipe.allowAll)
    assert.strictEqual(offers.length, 1)
    assert.strictEqual(input.made.count, 1)
    assert.strictEqual(output.made.count, 0)

    // Read (or spread, or serialized): made then, once, and the same value every time.
    const first = registry.describeEntry(entry).output
    assert.deepStrictEqual({ ...offers[0]! }.output, first)
    assert.include(JSON.stringify(offers[0]), '"output":')
    assert.strictEqual(output.made.count, 1)
    assert.strictEqual(input.made.count, 1)
  })
})
