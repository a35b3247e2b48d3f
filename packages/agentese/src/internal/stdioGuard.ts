/**
 * JSON-RPC hygiene for the stdio MCP server, in front of `effect/ai`'s
 * decoder: a line that is not JSON gets the specification's parse error
 * (`-32700`) and the channel goes on, where the decoder alone would end it;
 * a message whose `id` is not a string, a number or null gets an invalid
 * request (`-32600`, id null) instead of a defect report. Everything else
 * passes through unchanged.
 *
 * @internal
 */
import { Effect, Stdio, Stream } from "effect"

const reply = (code: number, message: string) =>
  `${JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } })}\n`

const validId = (id: unknown) => id === undefined || id === null || typeof id === "string" || typeof id === "number"

/** What to do with one line: pass it on, or answer it with an error and drop it. */
export const check = (line: string): { readonly pass: string } | { readonly answer: string } | undefined => {
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
  return { pass: line }
}

/**
 * The same standard I/O, with stdin checked line by line. Lines are split
 * here, as each chunk arrives: a line is handed on as soon as its newline is
 * read, never held back until the next chunk.
 */
export const guard = (stdio: Stdio.Stdio): Stdio.Stdio => {
  const answer = (text: string) => Stream.run(Stream.make(text), stdio.stdout({ endOnDone: false }))
  const stdin = Stream.suspend(() => {
    let rest = ""
    return stdio.stdin.pipe(
      Stream.decodeText(),
      Stream.mapEffect((chunk) => {
        const parts = (rest + chunk).split("\n")
        rest = parts.pop() ?? ""
        return Effect.forEach(parts, (line) => {
          const verdict = check(line)
          if (verdict === undefined) return Effect.succeed("")
          if ("pass" in verdict) return Effect.succeed(`${verdict.pass}\n`)
          return Effect.as(Effect.ignore(answer(verdict.answer)), "")
        }).pipe(Effect.map((lines) => lines.join("")))
      }),
      Stream.filter((text) => text !== ""),
      Stream.encodeText
    )
  })
  return Stdio.make({ ...stdio, stdin })
}
