/**
 * The MCP server over streamable HTTP: one endpoint path, a session per
 * `Mcp-Session-Id` (made by `initialize`), each session one connection of
 * the protocol, so the road keeps its proofs, plan mode and tasks per
 * session. A POST carries one message or a batch; requests are answered as
 * JSON, or as an event stream where a call may ask the person behind a
 * client that can be asked (the question travels on that stream). GET has
 * no stream to offer (405); DELETE ends a session.
 *
 * Bounds: a body limit, a nesting limit, live sessions at most (an idle one a
 * minute old gives way to a newcomer) and at most so many per client (its
 * oldest gives way), and an idle expiry. Authentication is the router's.
 *
 * In a room (`SessionState.McpSessions` shared), a session is recorded in the
 * room's store at initialize and looked up (its idle time restarted) on a
 * request, at most once a second per instance for a busy session (so one
 * deleted elsewhere is refused here within a second), so any instance goes
 * on with it: an instance that does not hold
 * it yet opens a connection from what initialize settled. The bounds then
 * hold the connections this instance keeps; one let go (idle, evicted, the
 * instance stopping) lives on in the room until it expires or is deleted.
 *
 * @internal
 */
import { randomUUID } from "node:crypto"
import {
  ByteSize,
  type Cause,
  Clock,
  Context,
  Duration,
  Effect,
  Exit,
  Layer,
  Option,
  Queue,
  Schedule,
  Scope,
  Stream
} from "effect"
import {
  HttpIncomingMessage,
  HttpRouter,
  HttpServerError,
  type HttpServerRequest,
  HttpServerResponse
} from "effect/http"
import * as Callers from "../../Callers.ts"
import type * as Human from "../../Human.ts"
import { Invoker } from "../../Invoke.ts"
import type * as Invoke from "../../Invoke.ts"
import * as SessionState from "../../SessionState.ts"
import { capture, within } from "../captured.ts"
import * as Server from "./server.ts"
import { maxDepth, nestsDeeperThan } from "../jsonDepth.ts"

export interface Options {
  readonly info: Server.Info
  readonly path: string
  readonly allowedOrigins: ReadonlyArray<string>
  readonly maxBodyBytes: number
  readonly maxSessions: number
  readonly maxSessionsPerClient: number
  readonly idleMillis: number
  /** Who answers a question when the client cannot. */
  readonly fallback: Option.Option<Human.Channel>
}

interface Session {
  readonly id: string
  readonly client: string
  /** The caller whose credential opened it (a callers file); only that credential uses it. */
  readonly caller: Callers.Configured | undefined
  readonly connection: Server.Connection
  readonly scope: Scope.Closeable
  /** Lines for the client outside a reply (questions), taken by whichever event stream is open. */
  readonly outbox: Queue.Queue<string, Cause.Done>
  protocolVersion: string | undefined
  canStream: boolean
  lastUsed: number
  /** When the room last confirmed the session (0: never; in memory it needs no confirming). */
  confirmedAt: number
}

/** How long a room's answer that a session lives stands, in milliseconds: a busy session asks once a second. */
const confirmMillis = 1000

const jsonRpcError = (status: number, code: number, message: string, headers?: Record<string, string>) =>
  HttpServerResponse.text(Server.errorLine(null, code, message), {
    status,
    contentType: "application/json",
    ...(headers !== undefined ? { headers } : {})
  })

const isTooLarge = (e: unknown): boolean =>
  HttpServerError.isHttpServerError(e) && e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge"

const accepts = (request: HttpServerRequest.HttpServerRequest, type: string) =>
  (request.headers.accept ?? "").toLowerCase().includes(type)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const encoder = new TextEncoder()
const event = (line: string) => encoder.encode(`event: message\ndata: ${line}\n\n`)

/** The endpoint's routes on the router in context, and the sweeper of idle sessions. */
export const layer = (options: Options): Layer.Layer<never, never, Invoke.Services | HttpRouter.HttpRouter> =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      const captured = yield* capture
      const sessions = new Map<string, Session>()
      const room = Option.filter(yield* Effect.serviceOption(SessionState.McpSessions), (s) => s.shared)
      const roadSession = (id: string) => `mcp-http:${id}`

      const end = (session: Session) =>
        Effect.suspend(() => {
          sessions.delete(session.id)
          return Effect.andThen(session.connection.close, Scope.close(session.scope, Exit.void)).pipe(Effect.ignore)
        })

      /** Lets this instance's connection go; in a room the session lives on for the others, else it ends. */
      const release = (session: Session) =>
        Option.isNone(room)
          ? end(session)
          : Effect.suspend(() => {
              sessions.delete(session.id)
              return Effect.andThen(session.connection.detach, Scope.close(session.scope, Exit.void)).pipe(
                Effect.ignore
              )
            })

      const open = (
        client: string,
        caller: Callers.Configured | undefined,
        resume?: { readonly id: string; readonly settled: SessionState.McpSession }
      ) =>
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          const outbox = yield* Queue.unbounded<string, Cause.Done>()
          const id = resume?.id ?? randomUUID()
          const connection = yield* within(captured)(
            Server.connect({
              info: options.info,
              send: (line) => Effect.asVoid(Queue.offer(outbox, line)),
              fallback: options.fallback,
              // The caller its credential named, over the server's configured one.
              services: () => Effect.succeed(caller === undefined ? captured : Context.merge(captured, caller.context)),
              session: roadSession(id),
              resume: resume?.settled
            })
          ).pipe(Scope.provide(scope))
          const now = yield* Clock.currentTimeMillis
          const session: Session = {
            id,
            client,
            caller,
            connection,
            scope,
            outbox,
            protocolVersion: resume?.settled.protocolVersion,
            canStream: false,
            lastUsed: now,
            confirmedAt: resume === undefined ? now : 0
          }
          sessions.set(id, session)
          return session
        })

      const sweep = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.forEach(
          [...sessions.values()].filter((s) => now - s.lastUsed >= options.idleMillis),
          release,
          { discard: true }
        )
      )

      /** Room for a new session of `client`: its own oldest, else an idle one, gives way; `false` when full. */
      const makeRoom = (client: string, now: number) =>
        Effect.gen(function* () {
          const own = [...sessions.values()].filter((s) => s.client === client).sort((a, b) => a.lastUsed - b.lastUsed)
          if (own.length >= options.maxSessionsPerClient) yield* release(own[0]!)
          if (sessions.size < options.maxSessions) return true
          yield* sweep
          if (sessions.size < options.maxSessions) return true
          const [oldest] = [...sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed)
          if (oldest !== undefined && now - oldest.lastUsed >= 60_000) {
            yield* release(oldest)
            return true
          }
          return false
        })

      const forbiddenOrigin = (request: HttpServerRequest.HttpServerRequest) => {
        const origin = request.headers.origin
        return origin !== undefined && !options.allowedOrigins.includes(origin)
      }

      const notFound = () =>
        jsonRpcError(
          404,
          Server.ErrorCode.invalidRequest,
          "Session not found: it ended or expired. Initialize a new session."
        )
      const storeDown = (e: { readonly message: string }) =>
        jsonRpcError(503, -32000, `${e.message} The session is kept; send the request again.`, { "retry-after": "1" })

      /**
       * This instance's connection of the session, in a room made from the room's record when it holds none.
       * A session the room confirmed within a second is not asked again (`fresh`), except to end it.
       */
      const local = (id: string, client: string, caller: Callers.Configured | undefined, fresh = true) =>
        Effect.gen(function* () {
          // Another credential's session is not found: its id alone never lends its caller's rights.
          const mine = (session: Session | undefined) => (session?.caller === caller ? session : undefined)
          if (Option.isNone(room)) return { session: mine(sessions.get(id)) }
          const now = yield* Clock.currentTimeMillis
          const known = mine(sessions.get(id))
          if (fresh && known !== undefined && now - known.confirmedAt < confirmMillis) return { session: known }
          const found = yield* Effect.result(room.value.find(id, options.idleMillis))
          if (found._tag === "Failure") return { error: storeDown(found.failure) }
          const held = sessions.get(id)
          if (found.success === undefined) {
            // Deleted or expired in the room: this instance's connection goes too.
            if (held !== undefined) yield* release(held)
            return { session: undefined }
          }
          if (held !== undefined) {
            if (held.caller !== caller) return { session: undefined }
            held.confirmedAt = now
            return { session: held }
          }
          if (found.success.callerId !== caller?.id) return { session: undefined }
          if (!(yield* makeRoom(client, now))) return { session: undefined }
          const opened = yield* open(found.success.client, caller, { id, settled: found.success })
          opened.confirmedAt = now
          return { session: opened }
        })

      const sessionOf = (
        request: HttpServerRequest.HttpServerRequest,
        caller: Callers.Configured | undefined,
        fresh = true
      ) =>
        Effect.gen(function* () {
          const id = request.headers["mcp-session-id"]
          if (id === undefined) {
            return {
              error: jsonRpcError(
                400,
                Server.ErrorCode.invalidRequest,
                "Bad Request: the Mcp-Session-Id header is missing; send initialize first."
              )
            }
          }
          const version = request.headers["mcp-protocol-version"]
          if (version !== undefined && !(Server.protocolVersions as ReadonlyArray<string>).includes(version)) {
            return {
              error: jsonRpcError(
                400,
                Server.ErrorCode.invalidRequest,
                `Bad Request: unsupported MCP-Protocol-Version ${version}.`
              )
            }
          }
          const found = yield* local(
            id,
            Option.getOrElse(request.remoteAddress, () => "unknown"),
            caller,
            fresh
          )
          if (found.error !== undefined) return { error: found.error }
          if (found.session === undefined) return { error: notFound() }
          return { session: found.session }
        })

      const post = (request: HttpServerRequest.HttpServerRequest) =>
        Effect.gen(function* () {
          if (forbiddenOrigin(request)) return HttpServerResponse.empty({ status: 403 })
          const tooLarge = jsonRpcError(
            413,
            Server.ErrorCode.invalidRequest,
            `The request is larger than ${options.maxBodyBytes} bytes.`
          )
          const declared = Number(request.headers["content-length"])
          if (Number.isFinite(declared) && declared > options.maxBodyBytes) return tooLarge
          const body = yield* Effect.result(
            Effect.provideService(request.text, HttpIncomingMessage.MaxBodySize, ByteSize.bytes(options.maxBodyBytes))
          )
          if (body._tag === "Failure") {
            return isTooLarge(body.failure)
              ? tooLarge
              : jsonRpcError(400, Server.ErrorCode.parse, "Parse error: the body could not be read.")
          }
          if (nestsDeeperThan(body.success)) {
            return jsonRpcError(
              400,
              Server.ErrorCode.invalidRequest,
              `Invalid Request: the message is nested deeper than ${maxDepth} levels of arrays and objects. Send flatter input.`
            )
          }
          let message: unknown
          try {
            message = JSON.parse(body.success)
          } catch {
            return jsonRpcError(400, Server.ErrorCode.parse, "Parse error: the body is not JSON.")
          }
          const messages: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
          const now = yield* Clock.currentTimeMillis
          let session: Session
          const initializing = messages.some((m) => isRecord(m) && m.method === "initialize")
          if (initializing) {
            if (messages.length > 1) {
              return jsonRpcError(
                400,
                Server.ErrorCode.invalidRequest,
                "Invalid Request: initialize must be sent alone."
              )
            }
            const client = Option.getOrElse(request.remoteAddress, () => "unknown")
            if (!(yield* makeRoom(client, now))) {
              return jsonRpcError(
                503,
                -32000,
                `This server holds ${options.maxSessions} MCP sessions, its limit. Close a session (DELETE with its Mcp-Session-Id) or try again later.`
              )
            }
            session = yield* open(client, yield* Callers.Identified)
          } else {
            const found = yield* sessionOf(request, yield* Callers.Identified)
            if (found.error !== undefined) return found.error
            session = found.session
          }
          session.lastUsed = now
          session.canStream = accepts(request, "text/event-stream")
          const headers: Record<string, string> = { "mcp-session-id": session.id }
          const requests = messages.filter(
            (m) => isRecord(m) && m.id !== undefined && m.id !== null && typeof m.method === "string"
          )
          // A reply as JSON has no room for notifications about its request (progress): they are not sent.
          // The session's caller over the server's, whose context the request's fiber holds.
          const caller = session.caller
          const asCaller = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
            caller === undefined
              ? effect
              : Effect.updateContext(effect, (c: Context.Context<R>) => Context.merge(c, caller.context))
          const answer = (m: unknown) => asCaller(session.connection.receive(m, () => Effect.void))
          if (requests.length === 0) {
            yield* Effect.forEach(messages, answer, { discard: true })
            return HttpServerResponse.empty({ status: 202, headers })
          }
          // A call is answered as a stream where the client takes one: its progress, and a question for the person
          // behind the client, travel on it before its reply.
          const asks = session.canStream && requests.some((m) => (m as Record<string, unknown>).method === "tools/call")
          if (!asks) {
            const replies = (yield* Effect.forEach(messages, answer, { concurrency: "unbounded" })).filter(
              (r): r is string => r !== undefined
            )
            const version = Option.fromNullishOr(initializing ? protocolOf(replies[0]) : undefined)
            if (Option.isSome(version)) session.protocolVersion = version.value
            // In a room, the session is recorded for the other instances before its id is handed out.
            const settled = initializing ? session.connection.settled() : undefined
            if (Option.isSome(room) && settled !== undefined) {
              const recorded = yield* Effect.result(
                room.value.open(
                  session.id,
                  {
                    client: session.client,
                    ...settled,
                    ...(session.caller === undefined ? {} : { callerId: session.caller.id })
                  },
                  options.idleMillis
                )
              )
              if (recorded._tag === "Failure") {
                yield* end(session)
                return jsonRpcError(503, -32000, `${recorded.failure.message} No session was opened.`, {
                  "retry-after": "1"
                })
              }
            }
            return HttpServerResponse.text(Array.isArray(message) ? `[${replies.join(",")}]` : (replies[0] ?? ""), {
              contentType: "application/json",
              headers
            })
          }
          const done = yield* Queue.unbounded<string, Cause.Done>()
          yield* Effect.forkIn(
            asCaller(
              Effect.forEach(
                messages,
                (m) =>
                  Effect.flatMap(
                    session.connection.receive(m, (line) => Effect.asVoid(Queue.offer(done, line))),
                    (reply) => (reply === undefined ? Effect.void : Queue.offer(done, reply))
                  ),
                { concurrency: "unbounded", discard: true }
              )
            ).pipe(Effect.ensuring(Queue.end(done))),
            session.scope
          )
          // The replies, and meanwhile any question the session has for the client; the stream ends with the replies.
          const questions = Stream.fromQueue(session.outbox)
          const replies = Stream.fromQueue(done)
          return HttpServerResponse.stream(
            Stream.map(Stream.merge(replies, questions, { haltStrategy: "left" }), event),
            {
              contentType: "text/event-stream",
              headers: { ...headers, "cache-control": "no-cache" }
            }
          )
        })

      const remove = (request: HttpServerRequest.HttpServerRequest) =>
        Effect.gen(function* () {
          if (forbiddenOrigin(request)) return HttpServerResponse.empty({ status: 403 })
          const found = yield* sessionOf(request, yield* Callers.Identified, false)
          if (found.error !== undefined) return found.error
          if (Option.isSome(room)) {
            // Ended for the whole room: its record and its remembered proofs.
            const ended = yield* Effect.result(room.value.end(found.session.id))
            if (ended._tag === "Failure") return storeDown(ended.failure)
            yield* within(captured)(Effect.flatMap(Invoker, (road) => road.endSession(roadSession(found.session.id))))
          }
          yield* end(found.session)
          return HttpServerResponse.empty({ status: 204 })
        })

      const path = options.path as HttpRouter.PathInput
      yield* router.add("POST", path, post)
      yield* router.add("DELETE", path, remove)
      yield* router.add("GET", path, (request: HttpServerRequest.HttpServerRequest) =>
        Effect.succeed(
          forbiddenOrigin(request)
            ? HttpServerResponse.empty({ status: 403 })
            : HttpServerResponse.empty({ status: 405, headers: { allow: "POST, DELETE" } })
        )
      )
      // Stopping lets this instance's connections go: in a room their sessions go on elsewhere.
      yield* Effect.addFinalizer(() => Effect.forEach([...sessions.values()], release, { discard: true }))
      yield* Effect.forkScoped(
        Effect.repeat(sweep, Schedule.spaced(Duration.millis(Math.max(1000, Math.min(60_000, options.idleMillis / 2)))))
      )
    })
  )

/** The protocol revision an initialize reply settled on. */
const protocolOf = (reply: string | undefined): string | undefined => {
  if (reply === undefined) return undefined
  try {
    const parsed = JSON.parse(reply) as { readonly result?: { readonly protocolVersion?: unknown } }
    return typeof parsed.result?.protocolVersion === "string" ? parsed.result.protocolVersion : undefined
  } catch {
    return undefined
  }
}
