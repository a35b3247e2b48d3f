import { assert, describe, it } from "@effect/vitest"
import { hello } from "@ugent/core"
import { Effect } from "effect"

describe("smoke", () => {
  it.effect("runs", () => Effect.sync(() => assert.strictEqual(hello("x"), "hello x")))
})
