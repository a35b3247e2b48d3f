/**
 * The MCP server over standard I/O: newline-delimited JSON-RPC on stdin and
 * stdout. Lines are cut as their bytes arrive (in linear time: a chunk is
 * searched once, and a line's pieces are joined once); a line longer than the
 * message limit is skipped to its end and answered with an error, never held
 * whole; a message nested deeper than the limit is refused before anything
 * walks it; one malformed line never ends the channel.
 *
 * @internal
 */
import { type Cause, Effect, Fiber, FiberSet, Option, Queue, type Scope, Stdio, Stream } from "effect"
import type * as Invoke from "../../Invoke.ts"
import * as Server from "./server.ts"

/** Whether a parsed value nests deeper than `max` (arrays and objects), walked without recursion. */
export const tooDeep = (value: unknown, max: number): boolean => {
  if (typeof value !== "object" || value === null) return false
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (depth > max) return true
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)
    for (const c of children) if (typeof c === "object" && c !== null) stack.push([c, depth + 1])
  }
  return false
}

/** The options of the stdio transport. */
export interface Options {
  readonly info: Server.Info
  /** The largest message read, in bytes (default 8 MiB). */
  readonly maxMessageBytes?: number | undefined
  /** The deepest nesting of a message (default 64). */
  readonly maxDepth?: number | undefined
}

/** Serves one client on the process's standard I/O until stdin ends. */
export const serve = (options: Options): Effect.Effect<void, never, Invoke.Services | Stdio.Stdio | Scope.Scope> =>
  Effect.gen(function* () {
    const stdio = yield* Stdio.Stdio
    const maxBytes = options.maxMessageBytes ?? 8 * 1024 * 1024
    const maxDepth = options.maxDepth ?? 64
    // One writer for every line: replies and questions interleave whole.
    const outbox = yield* Queue.unbounded<string, Cause.Done>()
    const writer = yield* Effect.forkScoped(
      Effect.ignore(
        Stream.run(
          Stream.map(Stream.fromQueue(outbox), (line) => `${line}\n`).pipe(Stream.encodeText),
          stdio.stdout({ endOnDone: false })
        )
      )
    )
    const write = (line: string) => Effect.asVoid(Queue.offer(outbox, line))
    const connection = yield* Server.connect({
      info: options.info,
      send: write,
      fallback: Option.none()
    })
    const fibers = yield* FiberSet.make<void>()
    const handle = (text: string): Effect.Effect<void> => {
      if (text.trim() === "") return Effect.void
      let message: unknown
      try {
        message = JSON.parse(text)
      } catch {
        return write(
          Server.errorLine(
            null,
            Server.ErrorCode.parse,
            "Parse error: the line is not JSON. Send one JSON-RPC message per line."
          )
        )
      }
      if (tooDeep(message, maxDepth)) {
        return write(
          Server.errorLine(
            null,
            Server.ErrorCode.invalidRequest,
            `Invalid Request: the message nests deeper than ${maxDepth} levels.`
          )
        )
      }
      const messages = Array.isArray(message) ? message : [message]
      return Effect.forEach(
        messages,
        (m) =>
          Effect.asVoid(
            FiberSet.run(
              fibers,
              Effect.flatMap(connection.receive(m), (reply) => (reply === undefined ? Effect.void : write(reply))),
              { startImmediately: true }
            )
          ),
        { discard: true }
      )
    }
    // The pieces of the line being read, and their size; past the limit the rest of the line is skipped.
    let pieces: Array<Buffer> = []
    let size = 0
    let skipping = false
    const tooLarge = () =>
      write(
        Server.errorLine(
          null,
          Server.ErrorCode.invalidRequest,
          `Invalid Request: a message is limited to ${maxBytes} bytes; this one was skipped. Send smaller writes (file.edit changes part of a file).`
        )
      )
    const chunk = (bytes: Uint8Array): Effect.Effect<void> => {
      const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      const lines: Array<string> = []
      let notices = 0
      let start = 0
      for (let nl = buffer.indexOf(10, start); nl !== -1; nl = buffer.indexOf(10, start)) {
        const piece = buffer.subarray(start, nl)
        start = nl + 1
        if (skipping || size + piece.length > maxBytes) {
          if (!skipping) notices++
          skipping = false
        } else {
          lines.push(
            (pieces.length === 0 ? piece : Buffer.concat([...pieces, piece], size + piece.length)).toString("utf8")
          )
        }
        pieces = []
        size = 0
      }
      const rest = buffer.subarray(start)
      if (rest.length > 0 && !skipping) {
        if (size + rest.length > maxBytes) {
          notices++
          skipping = true
          pieces = []
          size = 0
        } else {
          // The chunk's memory is reused by the stream: keep a copy of the unfinished line.
          pieces.push(Buffer.from(rest))
          size += rest.length
        }
      }
      return Effect.andThen(
        Effect.forEach(lines, handle, { discard: true }),
        notices === 0 ? Effect.void : Effect.forEach(Array.from({ length: notices }), tooLarge, { discard: true })
      )
    }
    yield* Stream.runForEach(stdio.stdin, chunk).pipe(Effect.ignore)
    // Stdin ended: the client is gone. Calls still running finish and are answered, then the connection closes.
    yield* FiberSet.awaitEmpty(fibers)
    yield* connection.close
    yield* Queue.end(outbox)
    yield* Fiber.await(writer)
  })
