/**
 * The stdio guard's direct road: a request the handler takes is answered in
 * front of the decoder and never reaches it; a cancellation stops it without
 * an answer; a defect is JSON-RPC's internal error for that id.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Queue, Sink, Stdio, Stream } from "effect"
import { type Direct, guard } from "../../src/internal/stdioGuard.ts"

const line = (message: object) => `${JSON.stringify(message)}\n`

/** Runs the guard over `input`: what it passes on to the decoder, and what it wrote to stdout. */
const run = <A = void>(
  input: ReadonlyArray<string>,
  direct: Direct,
  // What to observe once the guard had its time, while its fibers still run.
  observe: () => A = () => undefined as A
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const written: Array<string> = []
      const lines = yield* Queue.unbounded<string>()
      const stdio = Stdio.make({
        args: Effect.succeed([]),
        stdin: Stream.fromQueue(lines).pipe(Stream.encodeText),
        stdout: () =>
          Sink.forEachArray((chunks: ReadonlyArray<string | Uint8Array>) =>
            Effect.sync(() => written.push(...chunks.map(String)))
          ),
        stderr: () => Sink.drain
      })
      const guarded = yield* guard(stdio, direct)
      const passed: Array<string> = []
      yield* Effect.forkScoped(
        Stream.runForEach(guarded.stdin.pipe(Stream.decodeText()), (text) => Effect.sync(() => void passed.push(text)))
      )
      for (const text of input) yield* Queue.offer(lines, text)
      yield* Effect.sleep(50)
      return { passed: passed.join(""), written: written.join(""), observed: observe() }
    })
  )

describe("stdioGuard with a direct road", () => {
  it.live("answers what the handler takes, passes on the rest", () =>
    Effect.gen(function* () {
      const direct: Direct = (m) =>
        m.method === "tools/call"
          ? Effect.succeed(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { ok: 1 } }))
          : undefined
      const { passed, written } = yield* run(
        [
          line({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} }),
          line({ jsonrpc: "2.0", id: 2, method: "ping" })
        ],
        direct
      )
      assert.deepStrictEqual(JSON.parse(written), { jsonrpc: "2.0", id: 1, result: { ok: 1 } })
      assert.strictEqual(passed, line({ jsonrpc: "2.0", id: 2, method: "ping" }))
    })
  )

  it.live("a cancellation interrupts a direct request: no answer, and the notification is passed on", () =>
    Effect.gen(function* () {
      let interrupted = false
      const direct: Direct = (m) =>
        m.method === "tools/call"
          ? Effect.never.pipe(
              Effect.onInterrupt(() =>
                Effect.sync(() => {
                  interrupted = true
                })
              )
            )
          : undefined
      const cancel = line({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "a" } })
      const { passed, written, observed } = yield* run(
        [line({ jsonrpc: "2.0", id: "a", method: "tools/call", params: {} }), cancel],
        direct,
        () => interrupted
      )
      assert.isTrue(observed)
      assert.strictEqual(written, "")
      assert.strictEqual(passed, cancel)
    })
  )

  it.live("a defect on the direct road is the internal error (-32603) of that request", () =>
    Effect.gen(function* () {
      const direct: Direct = (m) => (m.method === "tools/call" ? Effect.die(new Error("boom")) : undefined)
      const { written } = yield* run([line({ jsonrpc: "2.0", id: 9, method: "tools/call", params: {} })], direct)
      const reply = JSON.parse(written)
      assert.strictEqual(reply.id, 9)
      assert.strictEqual(reply.error.code, -32603)
      assert.notInclude(written, "boom")
    })
  )
})
