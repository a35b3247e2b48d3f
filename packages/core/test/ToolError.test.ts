import { assert, describe, it } from "@effect/vitest"
import { Changes, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"

describe("ToolError", () => {
  it("messages tell the reader what to do next", () => {
    assert.match(
      new ToolError.TrustDenied({ tool: "file.write", required: 2, actual: 1 }).message,
      /needs trust L2.*has L1.*ask the operator/
    )
    assert.match(
      new ToolError.ApprovalDenied({ tool: "x", reason: "timeout", timeoutMillis: 30000 }).message,
      /30000 ms/
    )
    assert.match(
      new ToolError.Forbidden({ tool: "x", rule: "secrets", detail: '".env" names a secret file' }).message,
      /No trust level allows this/
    )
    assert.match(
      new ToolError.InvalidInput({ tool: "x", issues: 'Expected string\n  at ["path"]' }).message,
      /Expected string at \["path"\]/
    )
  })

  it("toJson keeps tag, fields and message", () => {
    const e = new ToolError.TrustDenied({ tool: "t", required: 2, actual: 0 })
    const json = ToolError.toJson(e, Schema.encodeSync(ToolError.TrustDenied)(e))
    assert.deepStrictEqual(Object.keys(json).sort(), ["_tag", "actual", "message", "required", "tool"])
    assert.strictEqual(json._tag, "TrustDenied")
  })

  it("isRetryable: only errors that say so, and never policy errors", () => {
    assert.isTrue(ToolError.isRetryable({ _tag: "Unavailable", retryable: true }))
    assert.isFalse(ToolError.isRetryable({ _tag: "Unavailable" }))
    assert.isFalse(ToolError.isRetryable({ _tag: "TrustDenied", retryable: true }))
    assert.isFalse(ToolError.isRetryable({ _tag: "CircuitOpen", retryable: true }))
    assert.isFalse(ToolError.isRetryable("boom"))
    assert.strictEqual(ToolError.retryAfterMillis({ retryAfterMillis: 1500 }), 1500)
    assert.strictEqual(ToolError.retryAfterMillis({ retryAfterMillis: -1 }), undefined)
  })
})

describe("Changes", () => {
  it.effect("delivers synchronously to every listener, until its scope closes", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Changes.Changes.pipe(Effect.flatMap((hub) => hub.listen((c) => seen.push(`a:${c.relative}`))))
          yield* Changes.Changes.pipe(Effect.flatMap((hub) => hub.listen((c) => seen.push(`b:${c.relative}`))))
          yield* Changes.publish({ path: "/ws/x", relative: "x", kind: "modified" })
          assert.deepStrictEqual(seen, ["a:x", "b:x"])
        })
      )
      yield* Changes.publish({ path: "/ws/y", relative: "y", kind: "created" })
      assert.deepStrictEqual(seen, ["a:x", "b:x"])
    }).pipe(Effect.provide(Changes.layer))
  )
})
