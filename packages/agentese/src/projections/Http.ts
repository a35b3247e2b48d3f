/**
 * The HTTP JSON API: the `invoke` road over HTTP. `GET /v1/paths` lists what
 * the configured caller may use, `GET /v1/paths/{path}` describes one path,
 * `POST /v1/invoke/{path}` calls it with the request body as input, and
 * `GET /v1/events` streams the road's events as server-sent events; the
 * OpenAPI document is at `GET /v1/openapi.json`.
 *
 * The caller (observer, trust level, recipe) is the server's configuration:
 * nothing in a request (headers, body fields) changes who calls, but its
 * credential, when the server has several callers (`Callers`). The server
 * binds to loopback by default and refuses requests whose `Host` is not a
 * loopback name (DNS rebinding) or that carry a foreign `Origin` (a web page
 * posting to the local server).
 *
 * @since 0.1.0
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Observer, ToolError } from "@ugent/core"
import {
  ByteSize,
  Context,
  Deferred,
  type Duration,
  Effect,
  Layer,
  Option,
  Redacted,
  Schedule,
  Schema,
  Scope,
  Stream
} from "effect"
import * as Sse from "effect/encoding/Sse"
import {
  HttpIncomingMessage,
  HttpRouter,
  HttpServer,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "effect/http"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "effect/http-api"
import { ApprovalStore, AuditStore } from "@ugent/wrappers"
import * as Callers from "../Callers.ts"
import * as Catalog from "../Catalog.ts"
import * as Human from "../Human.ts"
import * as Profile from "../Profile.ts"
import * as Events from "../Events.ts"
import * as JsonDepth from "../internal/jsonDepth.ts"
import * as Invoke from "../Invoke.ts"
import type * as Recipe from "../Recipe.ts"
import * as Approval from "../road/Approval.ts"
import * as Server from "../Server.ts"

// ---------------------------------------------------------------------------
// The contract
// ---------------------------------------------------------------------------

const FailureJson = Schema.Struct({
  _tag: Schema.String.annotate({ description: "The error's tag, e.g. TrustDenied, UnknownPath, FileNotFound." }),
  message: Schema.String.annotate({ description: "What went wrong and what to do next, for a person or a model." })
}).annotate({ description: "A failure: its tag, its message and its structured fields (more keys may follow)." })

const Kind = ToolError.KindSchema

/**
 * A successful call, as the API returns it (HTTP 200).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Success = Schema.Struct({
  ok: Schema.Literal(true),
  result: Schema.Unknown.annotate({ description: "The tool's output, encoded by its output schema." }),
  path: Schema.String,
  callId: Schema.String
}).annotate({ identifier: "Success" })

/**
 * A failed call or request, as the API returns it (HTTP 4xx or 5xx).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Struct({
  ok: Schema.Literal(false),
  error: FailureJson,
  kind: Kind,
  path: Schema.String,
  callId: Schema.String
}).annotate({ identifier: "Failure" })

const failureWith = (status: number, description: string) =>
  Failure.annotate({ description }).pipe(HttpApiSchema.status(status))

/**
 * One offered path in a listing (see the `Catalog`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Summary = Catalog.Summary

/**
 * @category models
 * @since 0.1.0
 */
export type Summary = Catalog.Summary

/**
 * The listing (see the `Catalog`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Listing = Catalog.Listing

/**
 * @category models
 * @since 0.1.0
 */
export type Listing = Catalog.Listing

/**
 * A path described (see the `Catalog`).
 *
 * @category schemas
 * @since 0.1.0
 */
export const Described = Catalog.Described

/**
 * @category models
 * @since 0.1.0
 */
export type Described = Catalog.Described

/**
 * The statistics the API returns: the window, the settings in force for the
 * server's caller, and the audit store's analytics.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Stats = Schema.Struct({
  since: Schema.Number,
  settings: Profile.SettingsJson,
  analytics: AuditStore.AuditAnalytics,
  /** The latest calls, newest first: each with its input, its result in a sentence and its estimated tokens. */
  recent: Schema.optionalKey(Schema.Array(AuditStore.AuditEntry))
}).annotate({ identifier: "Stats" })

/**
 * A failure of one tag: an endpoint with several failures of one shape is
 * encoded with the status of the first whose schema fits, so each is told
 * apart by its tag.
 */
const taggedFailure = (status: number, tag: string, kind: Invoke.FailureKind, description: string) =>
  Schema.Struct({
    ok: Schema.Literal(false),
    error: Schema.Struct({ _tag: Schema.Literal(tag), message: Schema.String }),
    kind: Schema.Literal(kind),
    path: Schema.String,
    callId: Schema.String
  })
    .annotate({ description })
    .pipe(HttpApiSchema.status(status))

/**
 * The approver's credential, required by the endpoints that list and answer
 * pending questions. It runs on the route the router matched, so no spelling
 * of the URL reaches those endpoints without it; the agents' token never
 * passes it, and a server without an approver's token refuses them all.
 *
 * @category middleware
 * @since 0.2.0
 */
export class Approver extends HttpApiMiddleware.Service<Approver>()("ugent/agentese/Http/Approver", {
  security: { bearer: HttpApiSecurity.bearer },
  error: [
    taggedFailure(
      401,
      "Unauthorized",
      "denied",
      "Answering needs the approver's token (Authorization: Bearer <UGENT_APPROVER_TOKEN>)."
    ),
    taggedFailure(
      403,
      "ApproverTokenRequired",
      "denied",
      "The server takes no answers over HTTP (no approver's token)."
    )
  ]
}) {}

const PathParam = {
  path: Schema.String.annotate({
    description:
      "A path (world.tools.file.read), its provider-safe name (world_tools_file_read), or for invoke a pipeline (a >> b, URL-encoded)."
  })
}

/**
 * The endpoints of version 1.
 *
 * @category contract
 * @since 0.1.0
 */
export class V1 extends HttpApiGroup.make("v1")
  .add(
    HttpApiEndpoint.get("list", "/paths", { success: Listing }).annotateMerge(
      OpenApi.annotations({ summary: "The paths this server's caller may use, by the check invoke enforces." })
    ),
    HttpApiEndpoint.get("describe", "/paths/:path", {
      params: PathParam,
      success: Described,
      error: failureWith(404, "No such path, or hidden from this caller (not_found).")
    }).annotateMerge(OpenApi.annotations({ summary: "A path's schemas, level and effects; a hidden path is 404." })),
    HttpApiEndpoint.post("invoke", "/invoke/:path", {
      params: PathParam,
      payload: Schema.Unknown.annotate({ description: "The input, as JSON (an empty body is {})." }),
      success: Success,
      error: [
        failureWith(400, "Invalid input, invalid JSON body, or an unparsable pipeline (invalid_input, parse)."),
        failureWith(401, "The server has a token and the request did not present it (Authorization: Bearer)."),
        failureWith(
          403,
          "Refused by the recipe, the trust level, an approval, a forbidden rule or the workspace jail (denied)."
        ),
        failureWith(404, "No such path (or hidden from this caller), or the thing named does not exist (not_found)."),
        failureWith(409, "The world is not as the caller assumed: a stale read proof, a file that exists (conflict)."),
        failureWith(413, "The body is larger than the server's limit."),
        failureWith(422, "The tool ran and failed on its own terms (failed)."),
        failureWith(
          429,
          "Rate limited, a repeated call (LoopDetected) or too many calls (rate_limited); see Retry-After."
        ),
        failureWith(503, "A dependency is down or the circuit is open (unavailable); see Retry-After when known."),
        failureWith(504, "The call timed out (timeout).")
      ]
    }).annotateMerge(OpenApi.annotations({ summary: "Invokes a path (or a pipeline) with the body as input." })),
    HttpApiEndpoint.get("stats", "/stats", {
      query: {
        since: Schema.optionalKey(
          Schema.NumberFromString.annotate({ description: "Epoch milliseconds (default: the last 24 hours)." })
        )
      },
      success: Stats,
      error: failureWith(503, "The audit store cannot be read (unavailable).")
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "Analytics of the audit store: calls, successes, refusals by reason, p50/p95 per path and per caller, each caller's calls of each path, failures grouped by error, and the road's settings. A caller named by its own token (a callers file) sees only its own."
      })
    ),
    HttpApiEndpoint.get("pending", "/pending", {
      success: Schema.Struct({ questions: Schema.Array(Human.PendingQuestion) })
    })
      .middleware(Approver)
      .annotateMerge(
        OpenApi.annotations({
          summary: "Questions waiting for a person: approvals of calls and a model's clarify questions."
        })
      ),
    HttpApiEndpoint.post("answer", "/pending/:id", {
      params: { id: Schema.String },
      payload: Schema.Struct({
        answer: Schema.optionalKey(
          Schema.String.annotate({
            description: "The answer: approve or deny for an approval, the text for a question."
          })
        ),
        declined: Schema.optionalKey(Schema.Boolean)
      }),
      success: Schema.Struct({ answered: Schema.Boolean }),
      error: [
        taggedFailure(404, "UnknownQuestion", "not_found", "No such question waits (answered, timed out or unknown)."),
        Schema.Struct({
          ok: Schema.Literal(false),
          error: Schema.Struct({
            _tag: Schema.Literals(["ApprovalExpired", "AlreadyAnswered"]),
            message: Schema.String
          }),
          kind: Schema.Literal("conflict"),
          path: Schema.String,
          callId: Schema.String
        })
          .annotate({ description: "The approval request expired, or was answered already (an answer is given once)." })
          .pipe(HttpApiSchema.status(409))
      ]
    })
      .middleware(Approver)
      .annotateMerge(OpenApi.annotations({ summary: "Answers a waiting question." })),
    HttpApiEndpoint.get("events", "/events", {
      success: HttpApiSchema.StreamSse({ data: Events.EventSchema })
    }).annotateMerge(
      OpenApi.annotations({
        summary:
          "Server-sent events of the road: tool.invoked, tool.completed, tool.failed, tool.trust_denied, tool.rate_limited."
      })
    )
  )
  .prefix("/v1") {}

/**
 * The HTTP API contract (its OpenAPI document is served at
 * `GET /v1/openapi.json`).
 *
 * @category contract
 * @since 0.1.0
 */
export class Api extends HttpApi.make("ugent")
  .add(V1)
  .annotateMerge(
    OpenApi.annotations({
      title: "ugent AGENTESE API",
      version: "0.1.0",
      description:
        "Every tool on a path, through one invoke road (policy, trust, rate limits, audit, tracing, events). The caller is the server's configuration, never the request."
    })
  ) {}

// ---------------------------------------------------------------------------
// Statuses
// ---------------------------------------------------------------------------

const statuses: Readonly<Record<ToolError.Kind, number>> = {
  invalid_input: 400,
  parse: 400,
  denied: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  failed: 422,
  unavailable: 503,
  timeout: 504
}

/**
 * The HTTP status of an outcome: 200 on success, else its kind's: 400
 * `invalid_input` and `parse`, 403 `denied`, 404 `not_found`, 409
 * `conflict`, 429 `rate_limited`, 422 `failed`, 503 `unavailable`, 504
 * `timeout`.
 *
 * **Example** (Statuses)
 * ```ts
 * import { Http } from "@ugent/agentese"
 * const failure = (kind: "denied" | "not_found", _tag: string) =>
 *   ({ ok: false, error: { _tag, message: "" }, kind, path: "p", callId: "c" }) as const
 * console.log(Http.statusOf(failure("denied", "TrustDenied")), Http.statusOf(failure("not_found", "NotFound")))
 * // => 403 404
 * ```
 *
 * @category statuses
 * @since 0.1.0
 */
export const statusOf = (outcome: Invoke.Outcome): number => (outcome.ok ? 200 : statuses[outcome.kind])

/**
 * The `Retry-After` header of an outcome (whole seconds, rounded up), from
 * its error's `retryAfterMillis`.
 *
 * @category statuses
 * @since 0.1.0
 */
export const retryAfterSeconds = (outcome: Invoke.Outcome): number | undefined => {
  if (outcome.ok) return undefined
  const ms = ToolError.retryAfterMillis(outcome.error)
  return ms === undefined ? undefined : Math.max(1, Math.ceil(ms / 1000))
}

// ---------------------------------------------------------------------------
// The routes
// ---------------------------------------------------------------------------

/**
 * Options of the API routes.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The largest request body accepted (default 1 MiB); larger is a 413. */
  readonly maxBodyBytes?: number | undefined
  /**
   * The `Host` names accepted (default: the loopback names `localhost`,
   * `127.0.0.1`, `[::1]`); `"any"` accepts every host (a server bound to a
   * public address behind its own proxy).
   */
  readonly allowedHosts?: ReadonlyArray<string> | "any" | undefined
  /** Browser origins allowed to call (default none: a request with an `Origin` header is refused). */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  /**
   * A shared secret every request must present as `Authorization: Bearer
   * <token>` (default none). It admits a client; it does not name one: every
   * admitted request still calls as the server's configured observer.
   */
  readonly token?: string | undefined
  /**
   * The secret that answers pending questions (`/v1/pending`, approvals and
   * clarify): `Authorization: Bearer <approverToken>`. It is not the agents'
   * `token`, so an agent cannot approve its own calls. Without it the server
   * takes no answers over HTTP: the pending routes are refused and a call
   * that needs a person is denied at once. Where the server has a `token`,
   * this one admits a request too (its holder calls as the configured
   * observer, like an agent).
   */
  readonly approverToken?: string | undefined
  /** The interval of the keep-alive comments on `/v1/events` (default 15 s). */
  readonly heartbeat?: Duration.Input | undefined
  /**
   * Callers named by their own tokens (see `Callers`): a request presenting
   * one calls as that caller, with its trust level, recipe, limits and
   * budget, on the JSON API and the MCP endpoint. With callers, every request
   * needs a credential: a caller's, the server's `token` (the configured
   * observer) or the approver's.
   */
  readonly callers?: ReadonlyArray<Callers.Configured> | undefined
}

/**
 * Completes when the server begins to stop: open event streams end then, so
 * a stopping server does not wait out its grace period for them. `serve`
 * provides it; the default never completes.
 *
 * @category services
 * @since 0.1.0
 */
export const Stopping = Context.Reference<Effect.Effect<void>>("ugent/agentese/Http/Stopping", {
  defaultValue: () => Effect.never
})

const loopbackNames = ["localhost", "127.0.0.1", "[::1]", "::1"]

const failureResponse = (
  status: number,
  tag: string,
  message: string,
  kind: Invoke.FailureKind,
  path: string,
  extra: Record<string, unknown> = {}
) =>
  HttpServerResponse.jsonUnsafe(
    { ok: false, error: { ...extra, _tag: tag, message }, kind, path, callId: "" },
    { status }
  )

const outcomeResponse = (outcome: Invoke.Outcome) => {
  const retryAfter = retryAfterSeconds(outcome)
  const status = statusOf(outcome)
  const options = {
    status,
    ...(retryAfter !== undefined && (status === 429 || status === 503)
      ? { headers: { "retry-after": String(retryAfter) } }
      : {})
  }
  // A success's result is spliced in from the text the road printed once.
  return outcome.ok && outcome.text !== undefined
    ? HttpServerResponse.text(
        `{"ok":true,"result":${outcome.text},"path":${JSON.stringify(outcome.path)},"callId":${JSON.stringify(outcome.callId)}}`,
        { ...options, contentType: "application/json" }
      )
    : HttpServerResponse.jsonUnsafe(outcome, options)
}

/**
 * Whether a `Host` header names an allowed host. It is read strictly: a name
 * or IPv4 address, or a bracketed IPv6 literal, then nothing or `:port`;
 * anything else (`[::1]evil.com`, `localhost:port`) names no host, so no
 * allowed one.
 */
const hostAllowed = (host: string, allowed: ReadonlyArray<string>): boolean => {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[^[\]:@/?#\s]+)(?::\d{0,5})?$/.exec(host)
  return m !== null && allowed.includes(m[1]!.toLowerCase())
}

const sameSecret = (given: string, expected: string) => {
  const a = createHash("sha256").update(given).digest()
  const b = createHash("sha256").update(expected).digest()
  return timingSafeEqual(a, b)
}

/**
 * A global middleware refusing requests from a foreign `Host` (DNS
 * rebinding), a browser `Origin` not allowed, or without a credential of the
 * server when it has an agents' token, and bounding every body read to
 * `maxBodyBytes`; it guards every route on the router, the MCP endpoint
 * too. It decides nothing on the URL: which credential a route needs beyond
 * admission is the route's own check, made on the route the router matched
 * (the {@link Approver} of the pending questions).
 *
 * @category layers
 * @since 0.1.0
 */
export const guard = (options: Options = {}): Layer.Layer<never, never, HttpRouter.HttpRouter> => {
  const hosts = options.allowedHosts ?? loopbackNames
  const origins = new Set(options.allowedOrigins ?? [])
  const token = options.token === "" ? undefined : options.token
  const approverToken = options.approverToken === "" ? undefined : options.approverToken
  const callers = options.callers ?? []
  // Every body read under the router is bounded, whichever route reads it (a route may set its own).
  const maxBody = ByteSize.bytes(options.maxBodyBytes ?? 1024 * 1024)
  return HttpRouter.middleware(
    (effect) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const host = request.headers.host
        if (hosts !== "any" && host !== undefined && !hostAllowed(host, hosts)) {
          return Effect.succeed(
            failureResponse(
              403,
              "HostDenied",
              `This server answers only to ${hosts.join(", ")}, not to the host ${host}. Call it by a local name (http://127.0.0.1:<port>).`,
              "denied",
              ""
            )
          )
        }
        let caller: Callers.Configured | undefined
        if (token !== undefined || callers.length > 0) {
          // Admission: a caller's token (who calls), the agents' token, or the approver's (whose own routes check it
          // again, as matched).
          const given = bearerOf(request.headers.authorization)
          caller = given === undefined ? undefined : Callers.identify(callers, given)
          const admitted =
            given !== undefined &&
            (caller !== undefined ||
              (token !== undefined && sameSecret(given, token)) ||
              (approverToken !== undefined && sameSecret(given, approverToken)))
          if (!admitted) {
            return Effect.succeed(
              HttpServerResponse.setHeader(
                failureResponse(
                  401,
                  "Unauthorized",
                  "This server needs its token: send Authorization: Bearer <token> (the UGENT_TOKEN it was started with).",
                  "denied",
                  ""
                ),
                "www-authenticate",
                'Bearer realm="ugent"'
              )
            )
          }
        }
        const origin = request.headers.origin
        if (origin !== undefined && !origins.has(origin)) {
          return Effect.succeed(
            failureResponse(
              403,
              "OriginDenied",
              `Requests from the web origin ${origin} are refused: a page in a browser may not call this server. Start the server with the origin allowed if it should.`,
              "denied",
              ""
            )
          )
        }
        return Effect.provideService(
          Effect.provideService(effect, HttpIncomingMessage.MaxBodySize, maxBody),
          Callers.Identified,
          caller
        )
      }),
    { global: true }
  )
}

const bearerOf = (authorization: string | undefined) => /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim()

/** The {@link Approver} middleware of a server: the approver's token, compared in constant time. */
const approverLayer = (options: Options) => {
  const approverToken = options.approverToken === "" ? undefined : options.approverToken
  const refusal = (tag: string, message: string) => ({
    ok: false as const,
    error: { _tag: tag, message },
    kind: "denied" as const,
    path: "",
    callId: ""
  })
  return Layer.succeed(Approver)({
    bearer: (effect, { credential }) => {
      if (approverToken === undefined) {
        return Effect.fail(
          refusal(
            "ApproverTokenRequired",
            "This server takes no answers over HTTP: start it with UGENT_APPROVER_TOKEN set, and answer with that token (the agents' token never answers)."
          )
        )
      }
      return sameSecret(Redacted.value(credential), approverToken)
        ? effect
        : Effect.fail(
            refusal(
              "Unauthorized",
              "Answering pending questions needs the approver's token: send Authorization: Bearer <UGENT_APPROVER_TOKEN>."
            )
          )
    }
  })
}

const unknownQuestion = (id: string) => ({
  ok: false as const,
  error: {
    _tag: "UnknownQuestion" as const,
    message: `No question ${id} waits: it was answered, it timed out, or it never existed. List the waiting ones with GET /v1/pending.`
  },
  kind: "not_found" as const,
  path: "",
  callId: ""
})

const V1Handlers = (options: Options) =>
  HttpApiBuilder.group(
    Api,
    "v1",
    Effect.fnUntraced(function* (handlers) {
      // The whole context of the server (the caller, its recipe, the approver), without the layer's scope:
      // a request's resources belong to the request.
      const context = Context.omit(Scope.Scope)(
        yield* Effect.context<Invoke.Invoker | Observer.Observer | Recipe.CurrentRecipe | Events.Events>()
      )
      const events = yield* Events.Events
      const serverAudit = yield* AuditStore.AuditStore
      const pending = yield* Human.Pending
      // Stored approval requests: listed and answered here too, after a restart and from other servers' calls.
      const approvals = Option.getOrUndefined(yield* Effect.serviceOption(ApprovalStore.ApprovalStore))
      // Only this workspace's stored requests: a store may be shared with servers of other workspaces.
      const root = (yield* Invoke.Invoker).workspaceRoot
      const ours = (a: ApprovalStore.Approval | undefined) =>
        a !== undefined && Approval.ofWorkspace(root, a) ? a : undefined
      const answerable = options.approverToken !== undefined && options.approverToken !== ""
      const stopping = yield* Stopping
      // A question waiting for a person is announced on the event stream.
      yield* pending.onAsked((q) =>
        events.publish({
          _tag: "human.asked",
          id: q.id,
          path: q.path ?? "",
          observerId: q.observerId,
          at: q.askedAt,
          kind: q.kind,
          text: q.text
        })
      )
      const maxBody = options.maxBodyBytes ?? 1024 * 1024
      const heartbeat = options.heartbeat ?? "15 seconds"
      // The caller the request's credential named (a callers file), else the server's configured one.
      const withCaller = <A, E>(
        effect: Effect.Effect<A, E, Invoke.Invoker | Observer.Observer | Recipe.CurrentRecipe>
      ) =>
        Effect.flatMap(Callers.Identified, (caller) =>
          Effect.provideContext(effect, caller === undefined ? context : Context.merge(context, caller.context))
        )

      // The road of the caller's project (its own workspace), else the server's.
      const onRoad = <A, E, R>(use: (road: Invoke.InvokerShape) => Effect.Effect<A, E, R>) =>
        Effect.flatMap(Invoke.Invoker, use)
      return handlers
        .handle("list", () => withCaller(onRoad((road) => Catalog.listing(road))))
        .handle("pending", () =>
          Effect.gen(function* () {
            const waiting = yield* pending.list
            const stored =
              approvals === undefined
                ? []
                : (yield* approvals.pending(Date.now()).pipe(Effect.orDie)).filter((a) => ours(a) !== undefined)
            const here = new Set(waiting.map((q) => q.id))
            const byId = new Map(stored.map((a) => [a.id, a]))
            // A question of this process shows its stored request's expiry, diff and files; one of another
            // process, or from before a restart, is listed from the store.
            const questions = [
              ...waiting.map((q) => {
                const a = byId.get(q.id)
                if (a === undefined) return q
                return {
                  ...q,
                  expiresAt: a.expiresAt,
                  files: a.files,
                  ...(a.preview === undefined ? {} : { preview: a.preview })
                }
              }),
              ...stored.filter((a) => !here.has(a.id)).map(Human.pendingOf)
            ]
            return { questions }
          })
        )
        .handle("answer", ({ params, payload }) =>
          Effect.gen(function* () {
            const given = payload.declined === true ? "declined" : (payload.answer ?? "")
            const stored =
              approvals === undefined ? undefined : ours(yield* approvals.get(params.id).pipe(Effect.orDie))
            if (approvals !== undefined && stored !== undefined) {
              const decision = given !== "declined" && Human.isApproval(given) ? "approved" : "denied"
              yield* approvals.answer(params.id, decision, { channel: "http-pending", now: Date.now() }).pipe(
                Effect.catchTag("StoreError", Effect.die),
                Effect.mapError((e) =>
                  e._tag === "UnknownApproval"
                    ? unknownQuestion(params.id)
                    : {
                        ok: false as const,
                        error: { _tag: e._tag, message: e.message },
                        kind: "conflict" as const,
                        path: "",
                        callId: ""
                      }
                )
              )
              // The call waiting in this process, if one is, wakes now (it finds this answer in the store).
              yield* pending.answer(params.id, given)
              return { answered: true }
            }
            const answered = yield* pending.answer(params.id, given)
            return answered ? { answered } : yield* Effect.fail(unknownQuestion(params.id))
          })
        )
        .handle("stats", ({ query }) =>
          Effect.gen(function* () {
            const since = query.since ?? Date.now() - 86_400_000
            const settings = yield* withCaller(onRoad((road) => road.settings))
            // A caller named by its own token sees its own figures; the operator (the server's or approver's token) all.
            const caller = yield* Callers.Identified
            const audit =
              caller === undefined
                ? serverAudit
                : Option.getOrElse(Context.getOption(caller.context, AuditStore.AuditStore), () => serverAudit)
            const unavailable = (e: unknown) => ({
              ok: false as const,
              error: ToolError.toJson(e),
              kind: ToolError.kindOf(e),
              path: "",
              callId: ""
            })
            const analytics = yield* audit
              .analytics({ since, observerId: caller?.id })
              .pipe(Effect.mapError(unavailable))
            const recent = yield* audit
              .list({ since, observerId: caller?.id, limit: 40 })
              .pipe(Effect.mapError(unavailable))
            return {
              since,
              settings: Profile.toJson(settings),
              analytics,
              recent: recent.filter((e) => e.phase === "after").slice(0, 20)
            }
          })
        )
        .handle("describe", ({ params }) =>
          withCaller(onRoad((road) => Catalog.describe(road, params.path))).pipe(
            Effect.map((r) =>
              r.ok ? HttpServerResponse.jsonUnsafe(r.description) : HttpServerResponse.jsonUnsafe(r, { status: 404 })
            )
          )
        )
        .handleRaw("invoke", ({ params, request }) =>
          Effect.gen(function* () {
            const path = params.path
            const declared = Number(request.headers["content-length"])
            if (Number.isFinite(declared) && declared > maxBody) return tooLarge(path, maxBody)
            const body = yield* Effect.result(
              request.text.pipe(Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBody)))
            )
            if (body._tag === "Failure") {
              const e = body.failure
              const tooBig =
                HttpServerError.isHttpServerError(e) && e.reason._tag === "RequestParseError"
                  ? e.reason.reason === "BodyTooLarge"
                  : false
              return tooBig
                ? tooLarge(path, maxBody)
                : failureResponse(400, "BodyUnreadable", "The request body could not be read.", "invalid_input", path)
            }
            if (JsonDepth.nestsDeeperThan(body.success)) {
              return failureResponse(
                400,
                "InvalidJson",
                `The body is nested deeper than ${JsonDepth.maxDepth} levels of arrays and objects. Send flatter input.`,
                "invalid_input",
                path
              )
            }
            let input: unknown = {}
            if (body.success.trim() !== "") {
              try {
                input = JSON.parse(body.success)
              } catch (e) {
                return failureResponse(
                  400,
                  "InvalidJson",
                  `The body is not valid JSON (${e instanceof Error ? e.message : String(e)}). Send the tool's input as a JSON object, e.g. {"path": "README.md"}.`,
                  "invalid_input",
                  path
                )
              }
            }
            return outcomeResponse(
              yield* withCaller(onRoad((road) => road.invoke({ path, input }))).pipe(
                // The person behind an HTTP call is the operator answering the server's pending questions,
                // when the server has one (an approver's token); else a call that needs a person is denied at once.
                Effect.provideService(Human.Current, answerable ? Option.some(pending.channel) : Option.none())
              )
            )
          }).pipe(
            Effect.catchDefect((defect) =>
              Effect.succeed(
                failureResponse(
                  500,
                  "InternalError",
                  `The server failed unexpectedly (${defect instanceof Error ? defect.message : String(defect)}). This is a bug; the call may not have run.`,
                  "failed",
                  params.path
                )
              )
            )
          )
        )
        .handleRaw("events", () =>
          Effect.gen(function* () {
            // A caller named by its own token hears its own calls only; the operator hears every call.
            const caller = yield* Callers.Identified
            const hub =
              caller === undefined
                ? events
                : Option.getOrElse(Context.getOption(caller.context, Events.Events), () => events)
            const all = yield* hub.subscribe
            const stream = caller === undefined ? all : Stream.filter(all, (event) => event.observerId === caller.id)
            const encoded = stream.pipe(
              Stream.map((event) =>
                Sse.encoder.write({ _tag: "Event", event: event._tag, id: undefined, data: JSON.stringify(event) })
              ),
              Stream.merge(Stream.fromSchedule(Schedule.spaced(heartbeat)).pipe(Stream.map(() => ": keep-alive\n\n")), {
                haltStrategy: "left"
              }),
              // The first bytes go out at once, so a client knows it is subscribed before any call is made.
              Stream.prepend([": subscribed\n\n"]),
              Stream.interruptWhen(stopping),
              Stream.encodeText
            )
            return HttpServerResponse.stream(encoded, {
              contentType: "text/event-stream",
              headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
            })
          })
        )
    })
  )

const tooLarge = (path: string, limit: number) =>
  HttpServerResponse.jsonUnsafe(
    {
      ok: false,
      error: {
        _tag: "PayloadTooLarge",
        message: `The body is larger than ${limit} bytes. Send a smaller input (read large files with offset and limit).`,
        limit
      },
      kind: "invalid_input",
      path,
      callId: ""
    },
    { status: 413, headers: { connection: "close" } }
  )

const notFoundRoute = HttpRouter.add(
  "*",
  "/v1/*",
  HttpServerResponse.jsonUnsafe(
    {
      ok: false,
      error: {
        _tag: "RouteNotFound",
        message:
          "No such route. The routes are GET /v1/paths, GET /v1/paths/{path}, POST /v1/invoke/{path}, GET /v1/stats, GET /v1/events, GET /v1/openapi.json."
      },
      kind: "not_found",
      path: "",
      callId: ""
    },
    { status: 404 }
  )
)

/**
 * The API routes on an `HttpRouter` (with the guard), served by
 * `HttpRouter.serve` next to other routes, such as the MCP endpoint. They
 * need the road of a `Server` layer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options = {}) =>
  Layer.mergeAll(
    HttpApiBuilder.layer(Api, { openapiPath: "/v1/openapi.json" }).pipe(
      Layer.provide(V1Handlers(options)),
      Layer.provide(approverLayer(options))
    ),
    notFoundRoute,
    guard(options)
  )

/**
 * A Node server that answers `503` to a request no handler has taken: in
 * the instant between listening and serving, and after serving ends while
 * it stops. Node leaves a request nobody listens for without an answer.
 */
const answeringUntilServed = () => {
  const server = createServer()
  server.on("request", (_request, response) => {
    if (server.listenerCount("request") > 1) return
    response.writeHead(503, { "content-type": "application/json", "retry-after": "1", connection: "close" })
    response.end(
      JSON.stringify({
        ok: false,
        error: { _tag: "NotServing", message: "The server is starting or stopping. Try again in a moment." },
        kind: "unavailable",
        path: "",
        callId: ""
      })
    )
  })
  return server
}

/**
 * Options of a served API: the server's configuration, where to listen, the
 * API options and more routes to mount on the same server.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServeOptions extends Server.Options, Options {
  /** The port (default 7345; 0 picks a free one). */
  readonly port?: number | undefined
  /** The address to bind (default 127.0.0.1, loopback). */
  readonly host?: string | undefined
}

const hostsOf = (options: ServeOptions, host: string) =>
  options.allowedHosts ?? (isLoopback(host) ? [...loopbackNames, host] : "any")

/** The callers, each whose project is not the server's on a road made for that project (one per root). */
const projectRoads = (options: ServeOptions) =>
  Effect.gen(function* () {
    const callers = options.callers
    if (callers === undefined || callers.every((c) => c.root === undefined || c.root === options.root)) return callers
    const roads = new Map<string, Context.Context<never>>()
    const out: Array<Callers.Configured> = []
    for (const caller of callers) {
      if (caller.root === undefined || caller.root === options.root) {
        out.push(caller)
        continue
      }
      let road = roads.get(caller.root)
      if (road === undefined) {
        road = (yield* Layer.build(Server.layer({ ...options, root: caller.root }))) as Context.Context<never>
        roads.set(caller.root, road)
      }
      out.push(Callers.onRoad(caller, road))
    }
    return out
  })

/**
 * Whether an address is a loopback address.
 *
 * @category models
 * @since 0.1.0
 */
export const isLoopback = (host: string): boolean =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)

/**
 * The API served over Node's HTTP server, with the road built from the
 * options; `routes` are mounted on the same server and share the road (the
 * MCP endpoint). The layer provides the `HttpServer` (its `address` gives the
 * port chosen for port 0).
 *
 * **Example** (Serving on a free port)
 * ```ts
 * import { Http } from "@ugent/agentese"
 * import { Effect, Layer } from "effect"
 * import { HttpServer } from "effect/http"
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * const program = Effect.gen(function* () {
 *   const url = HttpServer.formatAddress((yield* HttpServer.HttpServer).address)
 *   const response = yield* Effect.promise(() => fetch(`${url}/v1/paths`))
 *   const body = (yield* Effect.promise(() => response.json())) as Http.Listing
 *   return body.paths.map((p) => p.path).includes("world.tools.file.read")
 * })
 * const found = await Effect.runPromise(
 *   Effect.scoped(Layer.build(Http.serve({ root, stores: "memory", port: 0 })).pipe(Effect.flatMap((ctx) => Effect.provideContext(program, ctx))))
 * )
 * console.log(found)
 * // => true
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const serve = <E = never, R = never>(options: ServeOptions, routes?: Layer.Layer<never, E, R>) => {
  const host = options.host ?? "127.0.0.1"
  const api = layer({ ...options, allowedHosts: hostsOf(options, host) })
  return Layer.unwrap(
    Effect.gen(function* () {
      const stopping = yield* Deferred.make<void>()
      // Each caller's project is a road of its own (its workspace, registry, stores, proof scope), made once per root.
      const callers = yield* projectRoads(options)
      const withProjects =
        callers === options.callers ? api : layer({ ...options, callers, allowedHosts: hostsOf(options, host) })
      const app = routes === undefined ? withProjects : Layer.mergeAll(withProjects, routes)
      // The server listens only once the road and every route are built: a request sent while it starts is
      // refused by the OS, where a server listening first took it and left it unanswered.
      const served = Layer.effect(
        HttpServer.HttpServer,
        Effect.gen(function* () {
          const handler = yield* HttpRouter.toHttpEffect(app)
          const server = yield* NodeHttpServer.make(answeringUntilServed, {
            port: options.port ?? 7345,
            host,
            // Open event streams end when stopping begins (below); the grace is for calls in flight.
            gracefulShutdownTimeout: "5 seconds"
          })
          yield* server.serve(handler)
          return server
        })
      ).pipe(
        Layer.provide(Layer.mergeAll(Server.layer(options), Layer.succeed(Stopping, Deferred.await(stopping)))),
        Layer.provideMerge(NodeHttpServer.layerHttpServices)
      )
      // Built after the server, so released before it: event streams end before the server waits for its connections.
      return Layer.effectDiscard(Effect.addFinalizer(() => Deferred.succeed(stopping, undefined))).pipe(
        Layer.provideMerge(served)
      )
    })
  )
}
