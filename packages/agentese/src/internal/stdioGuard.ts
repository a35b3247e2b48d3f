/**
 * JSON-RPC hygiene for the stdio MCP server, in front of `effect/ai`'s
 * decoder: a line that is not JSON gets the specification's parse error
 * (`-32700`) and the channel goes on, where the decoder alone would end it;
 * a message whose `id` is not a string, a number or null gets an invalid
 * request (`-32600`, id null) instead of a defect report, and so does a
 * message nested too deep for the decoder's recursion (with its id) or over
 * the size cap (never read whole). Everything else
 * passes through unchanged, except what a `Direct` handler takes: those
 * requests are answered here, each in its own fiber, and never reach the
 * decoder (see `Mcp.layerStdio`).
 *
 * @internal
 */
import { Cause, Effect, FiberSet, Queue, Stdio, Stream } from "effect"
import type * as Scope from "effect/Scope"
import * as JsonDepth from "./jsonDepth.ts"

const reply = (code: number, message: string, id: string | number | null = null) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`

const validId = (id: unknown) => id === undefined || id === null || typeof id === "string" || typeof id === "number"

/** One parsed JSON-RPC message object. */
export type Message = Readonly<Record<string, unknown>>

/**
 * Requests answered in front of the decoder: given a message, the effect that
 * makes its whole response line, or `undefined` to pass the message on.
 */
export type Direct = (message: Message) => Effect.Effect<string> | undefined

/** What to do with one line: pass it on, or answer it with an error and drop it. */
export const check = (
  line: string
): { readonly pass: string; readonly message: unknown } | { readonly answer: string } | undefined => {
  if (line.trim() === "") return undefined
  let message: unknown
  try {
    message = JSON.parse(line)
  } catch {
    return { answer: reply(-32700, "Parse error: the line is not JSON. Send one JSON-RPC message per line.") }
  }
  const messages = Array.isArray(message) ? message : [message]
  for (const m of messages) {
    if (typeof m !== "object" || m === null) {
      return { answer: reply(-32600, "Invalid Request: a message must be a JSON object.") }
    }
    if (!validId((m as { readonly id?: unknown }).id)) {
      return { answer: reply(-32600, "Invalid Request: the id must be a string, a number or null.") }
    }
  }
  if (JsonDepth.nestsDeeperThan(line)) {
    const id = Array.isArray(message) ? null : ((message as { readonly id?: string | number | null }).id ?? null)
    return {
      answer: reply(
        -32600,
        `Invalid Request: the message is nested deeper than ${JsonDepth.maxDepth} levels of arrays and objects. Send flatter input.`,
        id
      )
    }
  }
  return { pass: line, message }
}

/** The default cap on one message (4 MiB). */
export const defaultMaxMessageBytes = 4 * 1024 * 1024

/** The largest cap: `effect/ai`'s line decoder refuses longer lines by ending the channel. */
export const largestMaxMessageBytes = 16 * 1024 * 1024

/** The answer to a message over the cap, which is not read. */
const tooLarge = (max: number) =>
  reply(
    -32600,
    `Invalid Request: the message is larger than ${max} bytes, this server's limit (maxMessageBytes); it was not read. Send less per message: write a large file in parts, read with offset and limit.`
  )

/**
 * Splits stdin's bytes into lines, in time linear in their length: a line's
 * pieces are kept and joined once at its newline (a newline byte is never
 * part of a UTF-8 sequence). A line over `max` bytes is dropped as it comes,
 * and stands as `undefined` in the result, once.
 */
const lineSplitter = (max: number) => {
  const decoder = new TextDecoder()
  let pieces: Array<Uint8Array> = []
  let size = 0
  let dropping = false
  return (chunk: Uint8Array): Array<string | undefined> => {
    const out: Array<string | undefined> = []
    let start = 0
    for (;;) {
      const newline = chunk.indexOf(10, start)
      const end = newline === -1 ? chunk.length : newline
      if (!dropping && end > start) {
        if (size + end - start > max) {
          dropping = true
          pieces = []
          out.push(undefined)
        } else {
          // A piece kept past this chunk is copied: the chunk's memory is not ours to hold.
          pieces.push(newline === -1 ? chunk.slice(start, end) : chunk.subarray(start, end))
          size += end - start
        }
      }
      if (newline === -1) return out
      if (!dropping) out.push(pieces.length === 1 ? decoder.decode(pieces[0]) : decoder.decode(Buffer.concat(pieces)))
      pieces = []
      size = 0
      dropping = false
      start = newline + 1
    }
  }
}

const requestKey = (id: unknown) => `${typeof id}:${String(id)}`

/**
 * The same standard I/O, with stdin checked line by line. Lines are split
 * here, as each chunk arrives: a line is handed on as soon as its newline is
 * read, never held back until the next chunk, and only whole lines are
 * handed on. A line over `maxMessageBytes` (default 4 MiB, at most 16 MiB)
 * is answered with `-32600` naming the cap as soon as it passes it, and
 * dropped to its newline. A request `direct` takes runs
 * in a fiber of the returned scope; a `notifications/cancelled` naming it
 * interrupts it (no response is sent), and is passed on as well.
 */
export const guard = (
  stdio: Stdio.Stdio,
  direct?: Direct,
  options: { readonly maxMessageBytes?: number | undefined } = {}
): Effect.Effect<Stdio.Stdio, never, Scope.Scope> =>
  Effect.gen(function* () {
    const fibers = yield* FiberSet.make<void>()
    // One writer for every answer made here: a sink per answer would add and remove stdout's listeners on each call.
    const outbox = yield* Queue.unbounded<string>()
    yield* Effect.forkScoped(Effect.ignore(Stream.run(Stream.fromQueue(outbox), stdio.stdout({ endOnDone: false }))))
    const write = (text: string) => Effect.asVoid(Queue.offer(outbox, text))
    // The direct requests in flight, by id: how to stop each.
    const running = new Map<string, { stop: () => void }>()
    const take = (message: Message): Effect.Effect<boolean> => {
      if (direct === undefined) return Effect.succeed(false)
      if (message.method === "notifications/cancelled") {
        const params = message.params as { readonly requestId?: unknown } | undefined
        running.get(requestKey(params?.requestId))?.stop()
        return Effect.succeed(false)
      }
      const handled = direct(message)
      if (handled === undefined) return Effect.succeed(false)
      const key = requestKey(message.id)
      const id = message.id as string | number
      // Registered before the fiber starts (it may end at once); removed when it ends.
      const slot = { stop: () => {} }
      running.set(key, slot)
      const answer = handled.pipe(
        Effect.flatMap((line) => write(`${line}\n`)),
        // A defect is the server's own failure: the client gets JSON-RPC's internal error, as from the decoder's road.
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.void : write(reply(-32603, "Internal error", id))
        ),
        Effect.ensuring(Effect.sync(() => running.get(key) === slot && running.delete(key)))
      )
      return Effect.map(FiberSet.run(fibers, answer, { startImmediately: true }), (fiber) => {
        slot.stop = () => fiber.interruptUnsafe()
        return true
      })
    }
    const max = Math.min(largestMaxMessageBytes, Math.max(1, options.maxMessageBytes ?? defaultMaxMessageBytes))
    const stdin = Stream.suspend(() => {
      const split = lineSplitter(max)
      return stdio.stdin.pipe(
        Stream.mapEffect((chunk) =>
          Effect.forEach(split(chunk), (line) => {
            if (line === undefined) return Effect.as(write(tooLarge(max)), "")
            const verdict = check(line)
            if (verdict === undefined) return Effect.succeed("")
            if ("pass" in verdict) {
              const m = verdict.message
              if (typeof m !== "object" || m === null || Array.isArray(m)) return Effect.succeed(`${verdict.pass}\n`)
              return Effect.map(take(m as Message), (taken) => (taken ? "" : `${verdict.pass}\n`))
            }
            return Effect.as(write(verdict.answer), "")
          }).pipe(Effect.map((lines) => lines.join("")))
        ),
        Stream.filter((text) => text !== ""),
        Stream.encodeText
      )
    })
    return Stdio.make({ ...stdio, stdin })
  })
