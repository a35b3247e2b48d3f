/**
 * The MCP server's protocol: one connection (a stdio client, or one session
 * of the streamable-HTTP endpoint) speaking JSON-RPC 2.0 as the official SDK
 * client does, on every protocol revision served. Requests are answered
 * here; every `tools/call` is one call of the road (`Invoker.invoke`) for the
 * server's caller, whose reply line is printed once from the road's text.
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
import { Cause, Deferred, Effect, Exit, Fiber, FiberSet, Option, type Scope } from "effect"
import * as Catalog from "../../Catalog.ts"
import * as Human from "../../Human.ts"
import * as Progress from "../../Progress.ts"
import type * as Invoke from "../../Invoke.ts"
import { Invoker } from "../../Invoke.ts"
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

/** The `_meta` keys of a tool and of a call result. */
export const MetaKeys = {
  path: "ugent/path",
  trust: "ugent/trust",
  approval: "ugent/approval",
  kind: "ugent/kind",
  callId: "ugent/callId"
} as const

/** A listed tool, as MCP describes one. */
export interface McpTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly outputSchema?: Readonly<Record<string, unknown>> | undefined
  readonly annotations: Readonly<Record<string, unknown>>
  readonly _meta: Readonly<Record<string, unknown>>
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
  return {
    name,
    title: description.path,
    description: description.description,
    inputSchema: Catalog.inputShape(description.input).schema,
    ...(output.type === "object" ? { outputSchema: output as Record<string, unknown> } : {}),
    annotations: {
      title: description.path,
      readOnlyHint: description.annotations.readOnly,
      destructiveHint: description.annotations.destructive,
      idempotentHint: description.annotations.idempotent,
      openWorldHint: description.annotations.openWorld
    },
    _meta: {
      [MetaKeys.path]: description.path,
      [MetaKeys.trust]: level.requiredTrust,
      [MetaKeys.approval]: level.requiresApproval
    }
  }
}

/** A call's result, as MCP sends it. */
export interface CallToolJson {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly structuredContent?: unknown
  readonly isError: boolean
  readonly _meta: Readonly<Record<string, unknown>>
}

/** The result JSON of an outcome (success: its text, and its structured form where the revision has one). */
export const callToolJson = (outcome: Invoke.Outcome, withStructure = true): CallToolJson =>
  outcome.ok
    ? {
        content: [{ type: "text", text: outcome.text ?? JSON.stringify(outcome.result) ?? "null" }],
        ...(withStructure && Catalog.isRecord(outcome.result) ? { structuredContent: outcome.result } : {}),
        isError: false,
        _meta: { [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId }
      }
    : {
        content: [{ type: "text", text: JSON.stringify(outcome.error) }],
        isError: true,
        _meta: { [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId, [MetaKeys.kind]: outcome.kind }
      }

/** The reply line of a call: a successful object result is printed once and spliced in as its structure too. */
export const callReply = (id: Id, outcome: Invoke.Outcome, withStructure: boolean): string => {
  if (!outcome.ok || !withStructure || !Catalog.isRecord(outcome.result) || outcome.text === undefined) {
    return resultLine(id, callToolJson(outcome, withStructure))
  }
  const meta = JSON.stringify({ [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId })
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${JSON.stringify(outcome.text)}}],"structuredContent":${outcome.text},"isError":false,"_meta":${meta}}}`
}

/**
 * The reply line of a mounted tool's call: its server's content parts (text,
 * images, resource links) and structured content as they came; anything else
 * (a failure, a result kept in working memory) as every call's.
 */
export const mountedReply = (id: Id, outcome: Invoke.Outcome, withStructure: boolean): string => {
  const result = outcome.ok ? outcome.result : undefined
  if (!isRecord(result) || !Array.isArray(result.content)) return callReply(id, outcome, withStructure)
  return resultLine(id, {
    content: result.content,
    ...(withStructure && isRecord(result.structuredContent) ? { structuredContent: result.structuredContent } : {}),
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
}

/** One client's connection. */
export interface Connection {
  /** Handles one parsed message; the reply line of a request, or `undefined` (a notification, a response). */
  readonly receive: (message: unknown) => Effect.Effect<string | undefined>
  /** Whether the client has initialized. */
  readonly initialized: () => boolean
  /** Ends the connection: its calls are interrupted, its questions unanswered, its session forgotten. */
  readonly close: Effect.Effect<void>
}

const isRecord = Catalog.isRecord

/**
 * A connection for the server's caller (in context). `send` writes a line to
 * the client outside any reply (a question); `fallback` is who answers a
 * question when the client cannot (none on stdio).
 */
export const connect = (options: {
  readonly info: Info
  readonly send: (line: string) => Effect.Effect<void>
  readonly fallback: Option.Option<Human.Channel>
  /** The session the road remembers this client's proofs and mode under. */
  readonly session?: string | undefined
}): Effect.Effect<Connection, never, Invoke.Services | Scope.Scope> =>
  Effect.gen(function* () {
    const captured = yield* capture
    const road = yield* Invoker
    const fibers = yield* FiberSet.make<unknown>()
    const session = options.session ?? `mcp:${randomUUID().slice(0, 13)}`
    const offers = yield* within(captured)(road.list)
    const byName = new Map<
      string,
      { readonly path: string; readonly unwrap: (args: unknown) => unknown; readonly mounted: boolean }
    >()
    for (const offer of offers) {
      const target = {
        path: offer.path,
        unwrap: Catalog.inputShape(offer.input).unwrap,
        mounted: offer.mount !== undefined
      }
      byName.set(Catalog.toolName(offer.path), target)
      byName.set(offer.path, target)
    }
    const tools = offers.map((o) => toMcpTool(o, Catalog.toolName(o.path), options.info.outputSchemas))

    let protocol: string | undefined
    let initialized = false
    let capabilities: Readonly<Record<string, unknown>> = {}
    // Calls in flight, by request id, so that a cancellation can stop one.
    const running = new Map<string, Fiber.Fiber<unknown>>()
    // Questions this server asked the client, by request id.
    const asked = new Map<string, Deferred.Deferred<Readonly<Record<string, unknown>>, string>>()
    let nextQuestion = 0

    const request = (method: string, params: unknown): Effect.Effect<Readonly<Record<string, unknown>>, string> =>
      Effect.suspend(() => {
        const id = `ugent-${++nextQuestion}`
        return Effect.flatMap(Deferred.make<Readonly<Record<string, unknown>>, string>(), (reply) => {
          asked.set(id, reply)
          return options
            .send(JSON.stringify({ jsonrpc: "2.0", id, method, params }))
            .pipe(Effect.andThen(Deferred.await(reply)), Effect.ensuring(Effect.sync(() => asked.delete(id))))
        })
      })

    // The person behind this client answers its questions by elicitation, where the client can show a form.
    const channel = (): Option.Option<Human.Channel> =>
      capabilities.elicitation === undefined
        ? options.fallback
        : Option.some(
            Human.elicitation((params) =>
              request("elicitation/create", protocol === "2025-11-25" ? { mode: "form", ...params } : params)
            )
          )

    const call = (id: Id, params: Readonly<Record<string, unknown>>): Effect.Effect<string> => {
      const { name, arguments: args } = params
      const target = typeof name === "string" ? byName.get(name) : undefined
      if (target === undefined) {
        return Effect.succeed(errorLine(id, ErrorCode.invalidParams, `Tool '${String(name)}' not found`))
      }
      if (args !== undefined && args !== null && !isRecord(args)) {
        return Effect.succeed(errorLine(id, ErrorCode.invalidParams, "Invalid params: arguments must be an object."))
      }
      // A client that gives a progress token hears the call's progress (a mounted server's, passed on).
      const meta = isRecord(params._meta) ? params._meta : {}
      const token = meta.progressToken
      const progress =
        typeof token === "string" || typeof token === "number"
          ? (report: Progress.Report) =>
              options.send(
                JSON.stringify({
                  jsonrpc: "2.0",
                  method: "notifications/progress",
                  params: { progressToken: token, ...report }
                })
              )
          : Progress.none
      return within(captured)(road.invoke({ path: target.path, input: target.unwrap(args ?? {}), session })).pipe(
        Effect.provideService(Human.Current, channel()),
        Effect.provideService(Progress.Current, progress),
        Effect.map((outcome) =>
          (target.mounted ? mountedReply : callReply)(id, outcome, protocol === undefined || structured.has(protocol))
        )
      )
    }

    const answer = (id: Id, method: string, params: Readonly<Record<string, unknown>>): Effect.Effect<string> => {
      switch (method) {
        case "initialize": {
          const requested = params.protocolVersion
          protocol = protocolVersions.find((v) => v === requested) ?? protocolVersions[0]
          capabilities = isRecord(params.capabilities) ? params.capabilities : {}
          return Effect.succeed(
            resultLine(id, {
              protocolVersion: protocol,
              capabilities: { logging: {}, tools: { listChanged: false } },
              serverInfo: { name: options.info.name, version: options.info.version },
              instructions: options.info.instructions
            })
          )
        }
        case "ping":
          return Effect.succeed(resultLine(id, {}))
        case "tools/list":
          return Effect.succeed(resultLine(id, { tools }))
        case "tools/call":
          return call(id, params)
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

    const receive = (message: unknown): Effect.Effect<string | undefined> => {
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
        if (method === "notifications/initialized") initialized = true
        else if (method === "notifications/cancelled") {
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
      return Effect.flatMap(FiberSet.run(fibers, answer(id, method, params), { startImmediately: true }), (fiber) => {
        const k = key(id)
        running.set(k, fiber)
        return Fiber.await(fiber).pipe(
          Effect.ensuring(Effect.sync(() => running.get(k) === fiber && running.delete(k))),
          Effect.map((exit) => {
            if (Exit.isSuccess(exit)) return exit.value as string
            // A cancelled call is not answered; any other failure is the server's own.
            return Cause.hasInterruptsOnly(exit.cause) ? undefined : errorLine(id, ErrorCode.internal, "Internal error")
          })
        )
      })
    }

    return {
      receive,
      initialized: () => initialized,
      close: Effect.gen(function* () {
        for (const reply of asked.values()) yield* Deferred.fail(reply, "the connection closed")
        yield* FiberSet.clear(fibers)
        yield* road.endSession(session)
      })
    }
  })
