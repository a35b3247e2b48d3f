import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { jsonOf } from "../../src/internal/jsonValue.ts"

describe("jsonOf", () => {
  it.prop("keeps a value that is plain JSON already as it is", { value: Schema.Json }, ({ value }) => {
    assert.strictEqual(jsonOf(value), value)
  })

  it("copies what is not plain JSON into JSON a store can keep", () => {
    const cycle: Record<string, unknown> = { name: "a" }
    cycle.self = cycle
    const value = {
      at: new Date(0),
      big: 10n,
      nan: Number.NaN,
      gone: undefined,
      list: [1, new Uint8Array(3)],
      cycle,
      error: Object.assign(new Error("boom"), { _tag: "Boom" })
    }
    const copy = jsonOf(value)
    assert.notStrictEqual<unknown>(copy, value)
    assert.deepStrictEqual(copy, {
      at: "1970-01-01T00:00:00.000Z",
      big: "10",
      nan: "NaN",
      list: [1, "[3 bytes]"],
      cycle: { name: "a", self: "[cycle]" },
      error: { message: "boom", _tag: "Boom" }
    })
    assert.deepStrictEqual(JSON.parse(JSON.stringify(copy)), copy)
  })
})
