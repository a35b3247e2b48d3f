/**
 * Bounds on the streamable-HTTP MCP endpoint that `effect/ai`'s server does
 * not set itself: a request body limit (the `/v1` API's), a nesting limit
 * (the decoder's recursion overflows on deep JSON), a cap on live
 * sessions and on one client's share of them, and an idle expiry. The endpoint's routes are registered
 * through a router that watches them: its POST handler is wrapped (size,
 * cap, last use), and its DELETE handler (the protocol's own session
 * termination) is kept, so an expired or evicted session is ended exactly as
 * a client's DELETE would end it.
 *
 * @internal
 */
import { ByteSize, Clock, Duration, Effect, Layer, Option, Schedule } from "effect"
import {
  HttpEffect,
  HttpIncomingMessage,
  type HttpRouter,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "effect/http"
import * as JsonDepth from "./jsonDepth.ts"

export interface Limits {
  readonly maxBodyBytes: number
  readonly maxSessions: number
  /** Live sessions of one client (one remote address) at most; its least recently used give way to its new ones. */
  readonly maxSessionsPerClient: number
  readonly idleMillis: number
  /** Called when a session ends (closed by its client, idle or evicted): what it remembers is forgotten. */
  readonly onEnd?: ((id: string) => Effect.Effect<void>) | undefined
}

interface Live {
  lastUsed: number
  protocolVersion: string | undefined
  /** Who opened it: the remote address (a credential is shared by every agent, and unchecked without a token). */
  client: string
}

type Handler = (
  request: HttpServerRequest.HttpServerRequest
) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>

const jsonRpcError = (status: number, code: number, message: string) =>
  HttpServerResponse.jsonUnsafe({ jsonrpc: "2.0", id: null, error: { code, message } }, { status })

const isTooLarge = (e: unknown): boolean =>
  HttpServerError.isHttpServerError(e) && e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge"

/**
 * A router for the MCP endpoint's layer: the given router, with the
 * endpoint's POST and DELETE handlers watched; and the sweeper that ends
 * idle sessions.
 */
export const watch = (router: HttpRouter.HttpRouter, path: string, limits: Limits) => {
  const sessions = new Map<string, Live>()
  let terminate: Handler | undefined

  const forget = (id: string) => {
    sessions.delete(id)
    return limits.onEnd === undefined ? Effect.void : limits.onEnd(id)
  }

  const end = (id: string) => {
    const live = sessions.get(id)
    if (terminate === undefined) return forget(id)
    const headers: Record<string, string> = { "mcp-session-id": id }
    if (live?.protocolVersion !== undefined) headers["mcp-protocol-version"] = live.protocolVersion
    const request = HttpServerRequest.fromWeb(new Request(`http://localhost${path}`, { method: "DELETE", headers }))
    return Effect.andThen(
      forget(id),
      Effect.ignore(Effect.provideService(terminate(request), HttpServerRequest.HttpServerRequest, request))
    )
  }

  /** A client's sessions, least recently used first. */
  const sessionsOf = (client: string) =>
    [...sessions].filter(([, live]) => live.client === client).sort((a, b) => a[1].lastUsed - b[1].lastUsed)

  /** Ends a client's least recently used sessions until it holds at most `keep`. */
  const trim = (client: string, keep: number) => {
    const own = sessionsOf(client)
    return Effect.forEach(own.slice(0, Math.max(0, own.length - keep)), ([id]) => end(id), { discard: true })
  }

  const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.forEach(
      [...sessions].filter(([, live]) => now - live.lastUsed >= limits.idleMillis).map(([id]) => id),
      end,
      { discard: true }
    )
  )

  const wrapPost =
    (handler: Handler): Handler =>
    (request) =>
      Effect.gen(function* () {
        const declared = Number(request.headers["content-length"])
        if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
          return jsonRpcError(413, -32600, `The request is larger than ${limits.maxBodyBytes} bytes.`)
        }
        // Read (and cache) the body under the limit first: the endpoint then reads the cached bytes.
        const body = yield* Effect.result(
          Effect.provideService(
            request.arrayBuffer,
            HttpIncomingMessage.MaxBodySize,
            ByteSize.bytes(limits.maxBodyBytes)
          )
        )
        if (body._tag === "Failure" && isTooLarge(body.failure)) {
          return jsonRpcError(413, -32600, `The request is larger than ${limits.maxBodyBytes} bytes.`)
        }
        if (body._tag === "Success" && JsonDepth.nestsDeeperThan(new TextDecoder().decode(body.success))) {
          return jsonRpcError(
            400,
            -32600,
            `Invalid Request: the message is nested deeper than ${JsonDepth.maxDepth} levels of arrays and objects. Send flatter input.`
          )
        }
        const now = yield* Clock.currentTimeMillis
        const id = request.headers["mcp-session-id"]
        const client = Option.getOrElse(request.remoteAddress, () => "unknown")
        // A client's new session takes the place of its own oldest beyond its share: one client cannot fill the pool.
        if (id === undefined) yield* trim(client, limits.maxSessionsPerClient - 1)
        if (id === undefined && sessions.size >= limits.maxSessions) {
          yield* sweep
          // Sessions over their client's share (opened at once, before any was counted) give way next.
          for (const other of new Set([...sessions.values()].map((live) => live.client))) {
            yield* trim(other, limits.maxSessionsPerClient)
          }
          if (sessions.size >= limits.maxSessions) {
            // The least recently used session gives way if it has been idle a minute; else the newcomer waits.
            const [oldest] = [...sessions].sort((a, b) => a[1].lastUsed - b[1].lastUsed)
            if (oldest !== undefined && now - oldest[1].lastUsed >= 60_000) yield* end(oldest[0])
            else {
              return jsonRpcError(
                503,
                -32000,
                `This server holds ${limits.maxSessions} MCP sessions, its limit. Close a session (DELETE with its Mcp-Session-Id) or try again later.`
              )
            }
          }
        }
        const record = (session: string | undefined, version: string | undefined) => {
          if (session === undefined || (id !== undefined && !sessions.has(id))) return
          const known = sessions.get(session)
          sessions.set(session, {
            lastUsed: now,
            protocolVersion: version ?? known?.protocolVersion,
            client: known?.client ?? client
          })
        }
        const response = yield* Effect.provideService(
          handler(request),
          HttpIncomingMessage.MaxBodySize,
          ByteSize.bytes(limits.maxBodyBytes)
        )
        if (id !== undefined) record(id, request.headers["mcp-protocol-version"])
        else {
          // A new session's id is set by a pre-response handler the endpoint registered while it ran:
          // registered after it, this one reads the id just before the response is sent.
          yield* HttpEffect.appendPreResponseHandler((_, final) =>
            Effect.sync(() => {
              record(final.headers["mcp-session-id"], final.headers["mcp-protocol-version"])
              return final
            })
          )
        }
        return response
      })

  const watched: HttpRouter.HttpRouter = {
    ...router,
    add: (method, route, handler, options) => {
      if (route === path && typeof handler === "function") {
        // The router types handlers generically (any E, R); McpServer's handler for its path is a function of
        // the request that never fails, which is what Handler names.
        const h = handler as unknown as Handler
        if (method === "POST") return router.add(method, route, wrapPost(h), options)
        if (method === "DELETE") {
          terminate = h
          return router.add(
            method,
            route,
            (request: HttpServerRequest.HttpServerRequest) => {
              const id = request.headers["mcp-session-id"]
              const ended = h(request)
              return id === undefined
                ? ended
                : Effect.tap(ended, (response) => (response.status < 300 ? forget(id) : Effect.void))
            },
            options
          )
        }
      }
      return router.add(method, route, handler, options)
    }
  }

  const sweeper = Layer.effectDiscard(
    Effect.forkScoped(
      Effect.repeat(sweep, Schedule.spaced(Duration.millis(Math.max(1000, Math.min(60_000, limits.idleMillis / 2)))))
    )
  )

  return { router: watched, sweeper, size: () => sessions.size }
}
