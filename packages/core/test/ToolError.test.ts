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

  it("isRetryable: only errors that say so, and never refusals or caller mistakes", () => {
    class Refusal extends Schema.TaggedError<Refusal>()("Refusal", { retryable: Schema.Boolean }) {
      static readonly kind: ToolError.Kind = "denied"
    }
    assert.isTrue(ToolError.isRetryable({ _tag: "Unavailable", retryable: true }))
    assert.isFalse(ToolError.isRetryable({ _tag: "Unavailable" }))
    assert.isFalse(ToolError.isRetryable(new Refusal({ retryable: true })))
    assert.isFalse(ToolError.isRetryable(new ToolError.TrustDenied({ tool: "t", required: 1, actual: 0 })))
    assert.isFalse(ToolError.isRetryable("boom"))
    assert.strictEqual(ToolError.retryAfterMillis({ retryAfterMillis: 1500 }), 1500)
    assert.strictEqual(ToolError.retryAfterMillis({ retryAfterMillis: -1 }), undefined)
  })
})

describe("ToolError kinds", () => {
  it("a kind lives on the error's class; an error without one is failed", () => {
    assert.strictEqual(ToolError.kindOf(new ToolError.InvalidInput({ tool: "t", issues: "x" })), "invalid_input")
    assert.strictEqual(ToolError.kindOf(new ToolError.TrustDenied({ tool: "t", required: 1, actual: 0 })), "denied")
    assert.strictEqual(ToolError.kindOf(new ToolError.ApprovalDenied({ tool: "t", reason: "denied" })), "denied")
    assert.strictEqual(ToolError.kindOf(new ToolError.Forbidden({ tool: "t", rule: "r", detail: "d" })), "denied")
    assert.strictEqual(ToolError.kindOf(new Error("boom")), "failed")
    assert.strictEqual(ToolError.kindOf({ _tag: "TrustDenied" }), "failed")
    assert.strictEqual(ToolError.kindOf("boom"), "failed")
  })

  it("a field named kind does not decide the failure's kind", () => {
    class Odd extends Schema.TaggedError<Odd>()("Odd", { kind: Schema.String }) {
      static readonly kind: ToolError.Kind = "not_found"
    }
    assert.strictEqual(ToolError.kindOf(new Odd({ kind: "timeout" })), "not_found")
  })

  it("isToolFault: only failed, unavailable and timeout count against a tool", () => {
    class Down extends Schema.TaggedError<Down>()("Down", {}) {
      static readonly kind: ToolError.Kind = "unavailable"
    }
    assert.isTrue(ToolError.isToolFault(new Error("boom")))
    assert.isTrue(ToolError.isToolFault(new Down()))
    assert.isFalse(ToolError.isToolFault(new ToolError.InvalidInput({ tool: "t", issues: "x" })))
    assert.isFalse(ToolError.isToolFault(new ToolError.TrustDenied({ tool: "t", required: 1, actual: 0 })))
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
