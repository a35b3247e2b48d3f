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
import { maxDepth, nestsDeeperThan } from "../jsonDepth.ts"
import * as Server from "./server.ts"

/** The id of a message too deep to parse, when its text names one first (`{"jsonrpc":"2.0","id":7,…`). */
const idOf = (text: string): string | number | null => {
  const m = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(text)
  if (m === null) return null
  return m[1]!.startsWith('"') ? (JSON.parse(m[1]!) as string) : Number(m[1])
}

/** The options of the stdio transport. */
export interface Options {
  readonly info: Server.Info
  /** Where the road comes from (see `Server.Services`). */
  readonly services: Server.Services
  /** The largest message read, in bytes (default 4 MiB). */
  readonly maxMessageBytes?: number | undefined
}

/** Serves one client on the process's standard I/O until stdin ends. */
export const serve = (options: Options): Effect.Effect<void, never, Stdio.Stdio | Scope.Scope> =>
  Effect.gen(function* () {
    const stdio = yield* Stdio.Stdio
    const maxBytes = options.maxMessageBytes ?? 4 * 1024 * 1024
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
      fallback: Option.none(),
      services: options.services
    })
    const fibers = yield* FiberSet.make<void>()
    const handle = (text: string): Effect.Effect<void> => {
      if (text.trim() === "") return Effect.void
      // Read before parsing: a deep value would overflow what walks it later, and lose the next request's answer.
      if (nestsDeeperThan(text)) {
        return write(
          Server.errorLine(
            idOf(text),
            Server.ErrorCode.invalidRequest,
            `Invalid Request: the message is nested deeper than ${maxDepth} levels of arrays and objects. Send flatter input.`
          )
        )
      }
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
          `Invalid Request: the message is larger than ${maxBytes} bytes, this server's limit (maxMessageBytes); it was not read. Send less per message: write a large file in parts, read with offset and limit.`
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
