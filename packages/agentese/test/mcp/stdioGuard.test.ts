/**
 * The stdio guard's direct road: a request the handler takes is answered in
 * front of the decoder and never reaches it; a cancellation stops it without
 * an answer; a defect is JSON-RPC's internal error for that id.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Queue, Schedule, Sink, Stdio, Stream } from "effect"
import { type Direct, guard } from "../../src/internal/stdioGuard.ts"

const line = (message: object) => `${JSON.stringify(message)}\n`

interface Seen<A> {
  /** What the guard passed on to the decoder. */
  readonly passed: string
  /** What it wrote to stdout. */
  readonly written: string
  readonly observed: A
}

/**
 * Runs the guard over `input` until `done` holds of what it passed on, wrote
 * and what `observe` sees (while its fibers still run), or fails after 5 s.
 */
const run = <A = void>(
  input: ReadonlyArray<string>,
  direct: Direct,
  done: (seen: Seen<A>) => boolean,
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
      const seen = (): Seen<A> => ({ passed: passed.join(""), written: written.join(""), observed: observe() })
      return yield* Effect.sync(seen).pipe(
        Effect.repeat({ until: done, schedule: Schedule.spaced("5 millis") }),
        Effect.timeoutOrElse({
          duration: "5 seconds",
          orElse: () => Effect.die(new Error(`the guard got no further than ${JSON.stringify(seen())}`))
        })
      )
    })
  )

/** Passed on after the lines before it: once it is seen, the guard has read them all. */
const last = line({ jsonrpc: "2.0", id: "last", method: "ping" })

describe("stdioGuard with a direct road", () => {
  it.live("answers what the handler takes, passes on the rest", () =>
    Effect.gen(function* () {
      const direct: Direct = (m) =>
        m.method === "tools/call"
          ? Effect.succeed(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { ok: 1 } }))
          : undefined
      const { passed, written } = yield* run(
        [line({ jsonrpc: "2.0", id: 1, method: "tools/call", params: {} }), last],
        direct,
        (seen) => seen.written !== "" && seen.passed.includes(last)
      )
      assert.deepStrictEqual(JSON.parse(written), { jsonrpc: "2.0", id: 1, result: { ok: 1 } })
      assert.strictEqual(passed, last)
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
      const { passed, written } = yield* run(
        [line({ jsonrpc: "2.0", id: "a", method: "tools/call", params: {} }), cancel, last],
        direct,
        (seen) => seen.observed && seen.passed.includes(last),
        () => interrupted
      )
      assert.strictEqual(written, "")
      assert.strictEqual(passed, cancel + last)
    })
  )

  it.live("a defect on the direct road is the internal error (-32603) of that request", () =>
    Effect.gen(function* () {
      const direct: Direct = (m) => (m.method === "tools/call" ? Effect.die(new Error("boom")) : undefined)
      const { written } = yield* run(
        [line({ jsonrpc: "2.0", id: 9, method: "tools/call", params: {} })],
        direct,
        (seen) => seen.written !== ""
      )
      const reply = JSON.parse(written)
      assert.strictEqual(reply.id, 9)
      assert.strictEqual(reply.error.code, -32603)
      assert.notInclude(written, "boom")
    })
  )
})
