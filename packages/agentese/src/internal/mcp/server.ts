/**
 * The MCP server's protocol: one connection (a stdio client, or one session
 * of the streamable-HTTP endpoint) speaking JSON-RPC 2.0 as the official SDK
 * client does, on every protocol revision served. Requests are answered
 * here; every `tools/call` is one call of the road (`Invoker.invoke`) for the
 * server's caller, whose reply line is printed once from the road's texts:
 * the text made for the client's model (`Render`, within the budget of the
 * client named at `initialize`) as the content, the JSON as the structured
 * content.
 * Questions for the person behind a call go back to the client as
 * `elicitation/create` requests when it can show them.
 *
 * Why our own and not `effect/ai`'s `McpServer`: a call through the latter
 * decodes and encodes every message through its schemas and routes it
 * through an RPC server, about a millisecond per call that an agent's many
 * small reads and edits pay (see `npm run bench -- mcp`); the protocol
 * surface a client uses is small (initialize, ping, tools, cancellation,
 * elicitation), and is tested here with the official SDK client.
 *
 * @internal
 */
import { randomUUID } from "node:crypto"
import { ToolError } from "@ugent/core"
import { Cause, Clock, type Context, Deferred, Effect, Exit, Fiber, FiberSet, Option, Schedule, Scope } from "effect"
import * as Budget from "../../Budget.ts"
import * as Catalog from "../../Catalog.ts"
import * as Human from "../../Human.ts"
import * as Progress from "../../Progress.ts"
import type * as Invoke from "../../Invoke.ts"
import { Invoker } from "../../Invoke.ts"
import * as Render from "../../Render.ts"
import { capture, within } from "../captured.ts"

/** The protocol revisions served, newest first. */
export const protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const

/** Revisions whose call results carry `structuredContent`. */
const structured: ReadonlySet<string> = new Set(["2025-11-25", "2025-06-18"])

/** JSON-RPC's error codes. */
export const ErrorCode = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603
} as const

type Id = string | number

/** An error reply line. */
export const errorLine = (id: Id | null, code: number, message: string): string =>
  JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })

const resultLine = (id: Id, result: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result })

const isRecord = Catalog.isRecord

/** The `_meta` keys of a tool and of a call result. */
export const MetaKeys = {
  path: "ugent/path",
  trust: "ugent/trust",
  approval: "ugent/approval",
  kind: "ugent/kind",
  callId: "ugent/callId",
  error: "ugent/error",
  result: "ugent/result"
} as const

/** A listed tool, as MCP describes one. */
export interface McpTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined
  readonly annotations: Readonly<Record<string, unknown>>
  /** The level a tool needs (`ugent/trust`, when above L0) and whether each call is confirmed (`ugent/approval`, when so). */
  readonly _meta?: Readonly<Record<string, unknown>> | undefined
}

/** The MCP tool of an offer, under `name`; its output schema only when asked for and an object. */
export const toMcpTool = (
  description: Catalog.Offer | import("../../Registry.ts").Description,
  name: string,
  outputSchema: boolean
): McpTool => {
  // A mounted tool's results are its server's content, not our output schema's shape: none is declared.
  const output =
    outputSchema && description.mount === undefined
      ? (Catalog.servedOutput(description.output) as { readonly type?: unknown })
      : {}
  const level = Catalog.levelOf(description)
  const meta = {
    ...(level.requiredTrust > 0 ? { [MetaKeys.trust]: level.requiredTrust } : {}),
    ...(level.requiresApproval ? { [MetaKeys.approval]: true } : {})
  }
  return {
    name,
    title: description.path,
    description: description.description,
    inputSchema: Catalog.inputShape(description.input).schema,
    ...(output.type === "object" ? { outputSchema: output as Record<string, unknown> } : {}),
    annotations: hints(description.annotations),
    ...(Object.keys(meta).length > 0 ? { _meta: meta } : {})
  }
}

/**
 * A tool's hints, only those that differ from MCP's defaults (not read-only,
 * destructive, not idempotent, open world), and for a read-only tool neither
 * destructive nor idempotent (the spec gives them meaning only for a tool
 * that writes): every client reads the same, and the list stays within the
 * reference servers' size per tool.
 */
const hints = (a: {
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
}): Readonly<Record<string, boolean>> => ({
  ...(a.readOnly ? { readOnlyHint: true } : {}),
  ...(!a.readOnly && !a.destructive ? { destructiveHint: false } : {}),
  ...(!a.readOnly && a.idempotent ? { idempotentHint: true } : {}),
  ...(a.openWorld ? {} : { openWorldHint: false })
})

/** A call's result, as MCP sends it. */
export interface CallToolJson {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: unknown
  readonly isError: boolean
  readonly _meta: Readonly<Record<string, unknown>>
}

const defaultAudience = Render.audience({})

/**
 * The result JSON of an outcome. Success: the text made for the model (else
 * the JSON) as the content, and the result as the structured content where
 * `withStructure` (on a revision without structured content, in
 * `_meta["ugent/result"]`, for programs). Failure: the failure as a model
 * reads it (a plain line, what to do next, the details), its JSON in `_meta`.
 */
export const callToolJson = (
  outcome: Invoke.Outcome,
  withStructure = true,
  audience: Render.Audience = defaultAudience,
  revisionHasStructure = true
): CallToolJson => {
  if (!outcome.ok) {
    return {
      content: [{ type: "text", text: Render.failure(outcome.error, audience) }],
      isError: true,
      // A client that hands its model the whole failed result (Gemini CLI) gets the text alone, not its JSON twice.
      _meta:
        Budget.clientNamed(audience.client)?.readsRawErrors === true
          ? {}
          : {
              [MetaKeys.path]: outcome.path,
              [MetaKeys.callId]: outcome.callId,
              [MetaKeys.kind]: outcome.kind,
              [MetaKeys.error]: outcome.error
            }
    }
  }
  const modelText = outcome.modelText
  const structure = withStructure && revisionHasStructure && Catalog.isRecord(outcome.result)
  return {
    content: [{ type: "text", text: modelText ?? outcome.text ?? JSON.stringify(outcome.result) ?? "null" }],
    ...(structure ? { structuredContent: outcome.result } : {}),
    isError: false,
    _meta: {
      [MetaKeys.path]: outcome.path,
      [MetaKeys.callId]: outcome.callId,
      // A revision without structured content still gives programs the JSON, beside the text made for the model.
      ...(withStructure && !revisionHasStructure && modelText !== undefined
        ? { [MetaKeys.result]: outcome.result }
        : {})
    }
  }
}

/** The reply line of a call: a successful object result's JSON, printed once by the road, is spliced in as its structure. */
export const callReply = (
  id: Id,
  outcome: Invoke.Outcome,
  withStructure: boolean,
  audience: Render.Audience = defaultAudience,
  revisionHasStructure = true
): string => {
  if (
    !outcome.ok ||
    !withStructure ||
    !revisionHasStructure ||
    !Catalog.isRecord(outcome.result) ||
    outcome.text === undefined
  ) {
    return resultLine(id, callToolJson(outcome, withStructure, audience, revisionHasStructure))
  }
  const meta = JSON.stringify({ [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId })
  const text = JSON.stringify(outcome.modelText ?? outcome.text)
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${text}}],"structuredContent":${outcome.text},"isError":false,"_meta":${meta}}}`
}

/**
 * The client's own id of a call, from the `_meta` of its `tools/call`:
 * Claude Code's tool-use id (`claudecode/toolUseId`), else Codex's thread
 * and turn (`x-codex-turn-metadata`, as `thread=… turn=…`); printable
 * characters only, at most 200.
 */
export const clientCallIdOf = (meta: unknown): string | undefined => {
  if (!isRecord(meta)) return undefined
  const clean = (s: string) => {
    const printable = s
      .replace(/[^\x20-\x7e]/g, "")
      .trim()
      .slice(0, 200)
    return printable === "" ? undefined : printable
  }
  const claude = meta["claudecode/toolUseId"]
  if (typeof claude === "string") return clean(claude)
  let codex = meta["x-codex-turn-metadata"]
  if (typeof codex === "string") {
    try {
      codex = JSON.parse(codex)
    } catch {
      codex = undefined
    }
  }
  if (isRecord(codex)) {
    const thread = codex.thread_id ?? codex.session_id
    const turn = codex.turn_id
    const parts = [
      typeof thread === "string" ? `thread=${thread}` : undefined,
      typeof turn === "string" ? `turn=${turn}` : undefined
    ].filter((p) => p !== undefined)
    if (parts.length > 0) return clean(parts.join(" "))
  }
  return undefined
}

/**
 * The reply line of a mounted tool's call: its server's content parts (text,
 * images, resource links) and structured content as they came; anything else
 * (a failure, a result kept in working memory) as every call's.
 */
export const mountedReply = (
  id: Id,
  outcome: Invoke.Outcome,
  withStructure: boolean,
  audience: Render.Audience = defaultAudience,
  revisionHasStructure = true
): string => {
  const result = outcome.ok ? outcome.result : undefined
  if (!isRecord(result) || !Array.isArray(result.content)) {
    return callReply(id, outcome, withStructure, audience, revisionHasStructure)
  }
  return resultLine(id, {
    content: result.content,
    ...(withStructure && revisionHasStructure && isRecord(result.structuredContent)
      ? { structuredContent: result.structuredContent }
      : {}),
    isError: false,
    _meta: { [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId }
  })
}

/** How the server presents itself. */
export interface Info {
  readonly name: string
  readonly version: string
  readonly instructions: string
  readonly outputSchemas: boolean
  /** How often a call the client follows (`_meta.progressToken`) says it is still running, in milliseconds. */
  readonly progressMillis: number
}

/** A call that may take long (a shell, the network) says it started at once; any other after a second. */
const quietMillis = 1000

/**
 * Notifications of a running call to a client that follows it: that it
 * started, then every `everyMillis` how long it has run, until it ends or the
 * tool reports its own progress (a mounted server's), which is passed on
 * from then. `progress` grows with each notification, as MCP asks.
 */
const withProgress = <A, E, R>(
  call: Effect.Effect<A, E, R>,
  options: {
    readonly token: string | number
    readonly name: string
    readonly long: boolean
    readonly everyMillis: number
    readonly notify: (line: string) => Effect.Effect<void>
  }
): Effect.Effect<A, E, R> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    let last = -1
    const send = (report: Progress.Report) => {
      // A value not above the last one sent is raised just above it (and then says no total).
      const raised = report.progress > last ? report : { message: report.message, progress: last + 0.1 }
      last = Math.round(raised.progress * 10) / 10
      return options.notify(
        JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: options.token, ...raised, progress: raised.progress }
        })
      )
    }
    const tell = (message: (seconds: number) => string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const seconds = Math.round((now - started) / 100) / 10
        return send({ progress: seconds, message: message(seconds) })
      })
    const first = tell((s) => (s < 0.1 ? `${options.name} started` : `${options.name} started ${s} s ago`))
    const beats = Effect.andThen(
      options.long ? first : Effect.delay(first, quietMillis),
      Effect.repeat(
        Effect.delay(
          tell((s) => `${options.name} still running after ${s} s`),
          options.everyMillis
        ),
        Schedule.forever
      )
    )
    const fiber = yield* Effect.forkChild(beats, { startImmediately: true })
    // The tool's own reports replace the beats.
    const reporter: Progress.Reporter = (report) => Effect.andThen(Fiber.interrupt(fiber), send(report))
    return yield* Effect.ensuring(Effect.provideService(call, Progress.Current, reporter), Fiber.interrupt(fiber))
  })

/** One client's connection. */
export interface Connection {
  /**
   * Handles one parsed message; the reply line of a request, or `undefined`
   * (a notification, a response). `notify` carries the notifications about
   * this request (its progress) to the client (default: the connection's
   * `send`).
   */
  readonly receive: (
    message: unknown,
    notify?: ((line: string) => Effect.Effect<void>) | undefined
  ) => Effect.Effect<string | undefined>
  /** Whether the client has initialized. */
  readonly initialized: () => boolean
  /** Ends the connection: its calls are interrupted, its questions unanswered, its session forgotten. */
  readonly close: Effect.Effect<void>
  /** Lets the connection go from this process only: its calls are interrupted, its session kept for others. */
  readonly detach: Effect.Effect<void>
  /** What initialize settled (to go on with the session elsewhere), once it has. */
  readonly settled: () => Settled | undefined
}

/** What a client settled at initialize: enough for another process to go on with its session. */
export interface Settled {
  readonly protocolVersion: string
  readonly capabilities: Readonly<Record<string, unknown>>
  readonly clientName?: string | undefined
}

/**
 * What a client said at initialize, for services made once it is known: its
 * capabilities, and how to ask it something (`roots/list`).
 */
export interface Hello {
  readonly capabilities: Readonly<Record<string, unknown>>
  readonly request: (method: string, params: unknown) => Effect.Effect<Readonly<Record<string, unknown>>, string>
}

/**
 * Where a connection's road comes from: the context holding the server's
 * services (`Invoke.Services`), made at once or once the client is known
 * (a failure says why the server could not start). Made at most once per
 * connection, in its scope.
 */
export type Services = (hello: Hello) => Effect.Effect<Context.Context<never>, string, Scope.Scope>

/** The services of the context `connect`'s caller runs in. */
export const servicesInContext: Effect.Effect<Services, never, Invoke.Services> = Effect.map(
  capture,
  (captured) => () => Effect.succeed(captured)
)

/** What a connection serves once its services are made. */
interface Ready {
  readonly captured: Context.Context<never>
  readonly road: Invoke.InvokerShape
  readonly offers: ReadonlyArray<Invoke.Offer>
  readonly byName: ReadonlyMap<
    string,
    {
      readonly path: string
      readonly name: string
      readonly unwrap: (args: unknown) => unknown
      readonly long: boolean
      readonly mounted: boolean
    }
  >
  readonly tools: ReadonlyArray<McpTool>
}

const readyOf = (captured: Context.Context<never>, outputSchemas: boolean): Effect.Effect<Ready> =>
  within(captured)(
    Effect.gen(function* () {
      const road = yield* Invoker
      const offers = yield* road.list
      const byName = new Map<string, Ready["byName"] extends ReadonlyMap<string, infer T> ? T : never>()
      for (const offer of offers) {
        const target = {
          path: offer.path,
          name: Catalog.toolName(offer.path),
          unwrap: Catalog.inputShape(offer.input).unwrap,
          long: offer.effects.callsShell === true || offer.effects.callsNetwork === true,
          mounted: offer.mount !== undefined
        }
        byName.set(target.name, target)
        byName.set(offer.path, target)
      }
      const tools = offers.map((o) => toMcpTool(o, Catalog.toolName(o.path), outputSchemas))
      return { captured, road, offers, byName, tools }
    })
  )

/**
 * A connection for the server's caller, whose road `services` gives. `send`
 * writes a line to the client outside any reply (a question); `fallback` is
 * who answers a question when the client cannot (none on stdio).
 */
export const connect = (options: {
  readonly info: Info
  readonly send: (line: string) => Effect.Effect<void>
  readonly fallback: Option.Option<Human.Channel>
  readonly services: Services
  /** The session the road remembers this client's proofs and mode under. */
  readonly session?: string | undefined
  /** A session initialized elsewhere (another instance of a room), gone on with here. */
  readonly resume?: Settled | undefined
}): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Scope.Scope
    const fibers = yield* FiberSet.make<unknown>()
    const session = options.session ?? `mcp:${randomUUID().slice(0, 13)}`

    let protocol: string | undefined
    let initialized = false
    let capabilities: Readonly<Record<string, unknown>> = {}
    let client: string | undefined
    // Who reads the results: the client named at initialize, its budget, and the names it lists tools under.
    let audience: Render.Audience | undefined
    // A client that hands its model the structured content instead of the text is sent none, unless schemas are declared.
    let structure = true
    // Calls in flight, by request id, so that a cancellation can stop one.
    const running = new Map<string, Fiber.Fiber<unknown>>()
    // Questions this server asked the client, by request id: random, since in a room several instances hold one
    // session and ask its client, and an answer that reaches another instance must answer nothing there.
    const asked = new Map<string, Deferred.Deferred<Readonly<Record<string, unknown>>, string>>()

    const request = (method: string, params: unknown): Effect.Effect<Readonly<Record<string, unknown>>, string> =>
      Effect.suspend(() => {
        const id = `ugent-${randomUUID()}`
        return Effect.flatMap(Deferred.make<Readonly<Record<string, unknown>>, string>(), (reply) => {
          asked.set(id, reply)
          return options
            .send(JSON.stringify({ jsonrpc: "2.0", id, method, params }))
            .pipe(Effect.andThen(Deferred.await(reply)), Effect.ensuring(Effect.sync(() => asked.delete(id))))
        })
      })

    // The road is made once, when the client is known (or at the first request that needs it).
    let made: Ready | undefined
    const hello: Hello = {
      get capabilities() {
        return capabilities
      },
      request
    }
    const ready = yield* Effect.cached(
      options.services(hello).pipe(
        Scope.provide(scope),
        Effect.flatMap((captured) => readyOf(captured, options.info.outputSchemas)),
        Effect.tap((r) =>
          Effect.sync(() => {
            made = r
          })
        ),
        // A server that cannot start says why to every request, whatever went wrong.
        Effect.catchCause((cause) =>
          Effect.fail(
            Cause.hasInterruptsOnly(cause) ? "the connection closed" : ToolError.messageOf(Cause.squash(cause))
          )
        )
      )
    )
    const start = Effect.asVoid(FiberSet.run(fibers, Effect.ignore(ready)))
    const withReady = (id: Id, use: (r: Ready) => Effect.Effect<string>): Effect.Effect<string> =>
      Effect.matchEffect(ready, {
        onFailure: (reason) =>
          Effect.succeed(
            errorLine(id, ErrorCode.internal, `The server could not start: ${reason.replace(/\.$/, "")}.`)
          ),
        onSuccess: use
      })
    const audienceOf = (r: Ready): Render.Audience => {
      if (audience === undefined) {
        // Hints name tools as this client lists them, under the name its configuration gives the server.
        audience = Render.audience({
          client,
          tools: r.offers.map((o) => ({ path: o.path, name: o.name })),
          toolName: (path) => Budget.listedName(client, options.info.name, Catalog.toolName(path))
        })
      }
      return audience
    }

    // The person behind this client answers its questions by elicitation, where the client can show a form.
    const channel = (): Option.Option<Human.Channel> =>
      capabilities.elicitation === undefined
        ? options.fallback
        : Option.some(
            Human.elicitation((params) =>
              request("elicitation/create", protocol === "2025-11-25" ? { mode: "form", ...params } : params)
            )
          )

    const call = (
      r: Ready,
      id: Id,
      params: Readonly<Record<string, unknown>>,
      notify: (line: string) => Effect.Effect<void>
    ): Effect.Effect<string> => {
      const { name, arguments: args } = params
      const target = typeof name === "string" ? r.byName.get(name) : undefined
      if (target === undefined) {
        return Effect.succeed(errorLine(id, ErrorCode.invalidParams, `Tool '${String(name)}' not found`))
      }
      if (args !== undefined && args !== null && !isRecord(args)) {
        return Effect.succeed(errorLine(id, ErrorCode.invalidParams, "Invalid params: arguments must be an object."))
      }
      const reader = audienceOf(r)
      const invocation = {
        path: target.path,
        input: target.unwrap(args ?? {}),
        session,
        audience: reader,
        clientCallId: clientCallIdOf(params._meta)
      }
      // A client that gives a progress token hears the call's progress (a mounted server's, passed on).
      const meta = isRecord(params._meta) ? params._meta : {}
      const token = meta.progressToken
      const invoked = within(r.captured)(r.road.invoke(invocation)).pipe(
        Effect.provideService(Human.Current, channel())
      )
      const followed =
        typeof token === "string" || typeof token === "number"
          ? withProgress(invoked, {
              token,
              name: target.name,
              long: target.long,
              everyMillis: options.info.progressMillis,
              notify
            })
          : invoked
      return Effect.map(followed, (outcome) =>
        (target.mounted ? mountedReply : callReply)(
          id,
          outcome,
          structure,
          reader,
          protocol === undefined || structured.has(protocol)
        )
      )
    }

    const settle = (settled: Settled) => {
      protocol = settled.protocolVersion
      capabilities = settled.capabilities
      client = settled.clientName
      audience = undefined
      structure = options.info.outputSchemas || Budget.clientNamed(client)?.readsStructured !== true
    }
    if (options.resume !== undefined) {
      settle(options.resume)
      initialized = true
      yield* start
    }

    const answer = (
      id: Id,
      method: string,
      params: Readonly<Record<string, unknown>>,
      notify: (line: string) => Effect.Effect<void> = options.send
    ): Effect.Effect<string> => {
      switch (method) {
        case "initialize": {
          const requested = params.protocolVersion
          const name = isRecord(params.clientInfo) ? params.clientInfo.name : undefined
          settle({
            protocolVersion: protocolVersions.find((v) => v === requested) ?? protocolVersions[0],
            capabilities: isRecord(params.capabilities) ? params.capabilities : {},
            clientName: typeof name === "string" ? name : undefined
          })
          const reply = resultLine(id, {
            protocolVersion: protocol,
            capabilities: { logging: {}, tools: { listChanged: false } },
            serverInfo: { name: options.info.name, version: options.info.version },
            // The tools the instructions name, as this client lists them.
            instructions: options.info.instructions.replace(/(?<![\w.])(?:world|self)_\w+/g, (tool) =>
              Budget.listedName(client, options.info.name, tool)
            )
          })
          // A client that reports roots is asked for them once it has initialized; any other's road is made now.
          return capabilities.roots === undefined ? Effect.as(start, reply) : Effect.succeed(reply)
        }
        case "ping":
          return Effect.succeed(resultLine(id, {}))
        case "tools/list":
          return withReady(id, (r) => Effect.succeed(resultLine(id, { tools: r.tools })))
        case "tools/call":
          return withReady(id, (r) => call(r, id, params, notify))
        case "resources/list":
          return Effect.succeed(resultLine(id, { resources: [] }))
        case "resources/templates/list":
          return Effect.succeed(resultLine(id, { resourceTemplates: [] }))
        case "prompts/list":
          return Effect.succeed(resultLine(id, { prompts: [] }))
        case "logging/setLevel":
          return Effect.succeed(resultLine(id, {}))
        default:
          return Effect.succeed(errorLine(id, ErrorCode.methodNotFound, `Method not found: ${method}`))
      }
    }

    const key = (id: unknown) => `${typeof id}:${String(id)}`

    const receive = (
      message: unknown,
      notify: (line: string) => Effect.Effect<void> = options.send
    ): Effect.Effect<string | undefined> => {
      if (!isRecord(message) || message.jsonrpc !== "2.0") {
        return Effect.succeed(
          errorLine(null, ErrorCode.invalidRequest, "Invalid Request: a message must be a JSON-RPC 2.0 object.")
        )
      }
      const { id, method } = message
      if (id !== undefined && id !== null && typeof id !== "string" && typeof id !== "number") {
        return Effect.succeed(
          errorLine(null, ErrorCode.invalidRequest, "Invalid Request: the id must be a string, a number or null.")
        )
      }
      if (typeof method !== "string") {
        // A response to one of our questions.
        const reply = typeof id === "string" ? asked.get(id) : undefined
        if (reply !== undefined) {
          const result = message.result
          return Effect.as(
            isRecord(result) ? Deferred.succeed(reply, result) : Deferred.fail(reply, "the client could not answer"),
            undefined
          )
        }
        return Effect.succeed(undefined)
      }
      const params = isRecord(message.params) ? message.params : {}
      if (id === undefined || id === null) {
        // A notification: nothing is answered.
        if (method === "notifications/initialized") {
          initialized = true
          return Effect.as(start, undefined)
        }
        if (method === "notifications/cancelled") {
          const fiber = running.get(key(params.requestId))
          if (fiber !== undefined) return Effect.as(Fiber.interrupt(fiber), undefined)
        }
        return Effect.succeed(undefined)
      }
      if (method !== "initialize" && method !== "ping" && protocol === undefined) {
        return Effect.succeed(errorLine(id, ErrorCode.invalidRequest, "Invalid Request: send initialize first."))
      }
      if (method !== "tools/call") return answer(id, method, params)
      // A call runs in a fiber of its own, so that a cancellation can interrupt it; its reply is its result.
      return Effect.flatMap(
        FiberSet.run(fibers, answer(id, method, params, notify), { startImmediately: true }),
        (fiber) => {
          const k = key(id)
          running.set(k, fiber)
          return Fiber.await(fiber).pipe(
            Effect.ensuring(Effect.sync(() => running.get(k) === fiber && running.delete(k))),
            Effect.map((exit) => {
              if (Exit.isSuccess(exit)) return exit.value as string
              // A cancelled call is not answered; any other failure is the server's own.
              return Cause.hasInterruptsOnly(exit.cause)
                ? undefined
                : errorLine(id, ErrorCode.internal, "Internal error")
            })
          )
        }
      )
    }

    const detach = Effect.gen(function* () {
      for (const reply of asked.values()) yield* Deferred.fail(reply, "the connection closed")
      yield* FiberSet.clear(fibers)
    })
    return {
      receive,
      initialized: () => initialized,
      close: Effect.gen(function* () {
        yield* detach
        if (made !== undefined) yield* made.road.endSession(session)
      }),
      detach,
      settled: () =>
        protocol === undefined ? undefined : { protocolVersion: protocol, capabilities, clientName: client }
    }
  })
