/**
 * What the provider tests share: a `node:http` server on an ephemeral
 * loopback port that records every request (method, path, headers, JSON
 * body) and answers from a script, the way the providers document their
 * answers: a JSON body with a status and headers, or Server-Sent Events
 * written chunk by chunk.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Layer, type Scope } from "effect"
import type { LanguageModel } from "effect/ai"
import { FetchHttpClient, type HttpClient } from "effect/http"

/** A request the server received. */
export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  // biome-ignore lint/suspicious/noExplicitAny: the assertions are the type check of a request's body
  readonly body: any
}

/** One Server-Sent Event: `event:` (optional) and `data:` (JSON, or a string sent as is). */
export interface Event {
  readonly event?: string
  readonly data: unknown
}

/**
 * An answer: JSON with a status and headers, Server-Sent Events, a
 * connection closed without an answer, or no answer at all.
 */
export type Answer =
  | {
      readonly status?: number
      readonly headers?: Record<string, string>
      readonly json?: unknown
      readonly text?: string
    }
  | { readonly status?: number; readonly headers?: Record<string, string>; readonly events: ReadonlyArray<Event> }
  | { readonly hangUp: true }
  | { readonly silent: true }

/** Writes events as `text/event-stream`, each in its own chunk so a client must reassemble them. */
const writeEvents = async (res: ServerResponse, events: ReadonlyArray<Event>) => {
  for (const e of events) {
    const data = typeof e.data === "string" ? e.data : JSON.stringify(e.data)
    res.write(`${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${data}\n\n`)
    await new Promise((resolve) => setImmediate(resolve))
  }
  res.end()
}

/**
 * Starts a server for the scope. `answer` gets each request and its index
 * (0 for the first); the server records what it received.
 */
export const serve = (
  answer: (request: Received, index: number) => Answer
): Effect.Effect<{ readonly url: string; readonly received: Array<Received> }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ readonly url: string; readonly received: Array<Received>; readonly close: () => Promise<void> }>(
          (resolve) => {
            const received: Array<Received> = []
            const server = createServer((req, res) => {
              const chunks: Array<Buffer> = []
              req.on("data", (c: Buffer) => chunks.push(c))
              req.on("end", () => {
                const text = Buffer.concat(chunks).toString("utf8")
                let body: unknown = text
                try {
                  body = text.length > 0 ? JSON.parse(text) : undefined
                } catch {
                  // not JSON: keep the text
                }
                const request: Received = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body }
                received.push(request)
                const a = answer(request, received.length - 1)
                if ("silent" in a) return
                if ("hangUp" in a) {
                  req.socket.destroy()
                  return
                }
                if ("events" in a) {
                  res.writeHead(a.status ?? 200, { "content-type": "text/event-stream", ...a.headers })
                  void writeEvents(res, a.events)
                  return
                }
                res.writeHead(a.status ?? 200, { "content-type": "application/json", ...a.headers })
                res.end(a.text ?? JSON.stringify(a.json ?? {}))
              })
            })
            server.listen(0, "127.0.0.1", () => {
              const { port } = server.address() as AddressInfo
              resolve({
                url: `http://127.0.0.1:${port}`,
                received,
                close: () =>
                  new Promise<void>((done) => {
                    server.closeAllConnections()
                    server.close(() => done())
                  })
              })
            })
          }
        )
    ),
    (server) => Effect.promise(server.close)
  )

/** Provides a model layer that needs an `HttpClient` with the fetch client. */
export const withFetch = (
  layer: Layer.Layer<LanguageModel.LanguageModel, never, HttpClient.HttpClient>
): Layer.Layer<LanguageModel.LanguageModel> => Layer.provide(layer, FetchHttpClient.layer)

/** Fast retries for tests: the delays that matter are the server's `Retry-After`. */
export const fastRetry = { base: "5 millis", cap: "20 millis" } as const

/** A free loopback port nobody listens on: bind one, note it, close it. */
export const closedPort: Effect.Effect<number> = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
)
