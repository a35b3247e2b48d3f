/**
 * The MCP projection: the `invoke` road served as a Model Context Protocol
 * server (`effect/ai` `McpServer`) over stdio or streamable HTTP. A client
 * sees exactly the paths its caller is offered (`Invoker.list`), each under a
 * provider-safe name (`world_tools_file_read`) with the dotted path as its
 * title and in `_meta`; every call goes through `Invoker.invoke`, and a
 * typed failure comes back as its JSON (`_tag`, `message`, fields) with
 * `isError: true`.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { Boundary, Observer } from "@ugent/core"
import { Context, Duration, Effect, Layer, Logger, Option, Stdio } from "effect"
import { McpProtocol, McpSchema, McpServer } from "effect/ai"
import { HttpRouter, HttpServerRequest } from "effect/http"
import * as Catalog from "../Catalog.ts"
import * as Families from "../Families.ts"
import * as Human from "../Human.ts"
import { capture, within } from "../internal/captured.ts"
import * as McpSessions from "../internal/mcpSessions.ts"
import * as StdioGuard from "../internal/stdioGuard.ts"
import type * as Invoke from "../Invoke.ts"
import { Invoker } from "../Invoke.ts"
import * as Recipe from "../Recipe.ts"
import type { Description } from "../Registry.ts"

/**
 * What the MCP server needs: the road and the caller it serves (as provided
 * by `Server.layer`).
 *
 * @category models
 * @since 0.1.0
 */
export type Services = Invoke.Services

/**
 * How the server presents itself.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The server name clients show (default `"ugent"`). */
  readonly name?: string | undefined
  /** The server version (default the package's). */
  readonly version?: string | undefined
  /** Instructions for the model, sent at initialization (default {@link instructions}). */
  readonly instructions?: string | undefined
  /**
   * Whether tools declare their output JSON Schema (default false). Results
   * carry `structuredContent` either way. A client that validates
   * structured output compiles every declared schema on each `tools/list`
   * (the official TypeScript SDK: about 100 ms for the standard paths on
   * this project's benchmark machine), and the listing is two and a half times
   * larger; turn it on for clients that use the schemas.
   */
  readonly outputSchemas?: boolean | undefined
  /**
   * On stdio, the largest message read (default 4 MiB, at most 16 MiB, the
   * line limit of `effect/ai`'s decoder): a longer line is answered with a
   * JSON-RPC `-32600` error naming the cap and is not read. Over HTTP,
   * `maxBodyBytes` bounds a request.
   */
  readonly maxMessageBytes?: number | undefined
}

/**
 * The options of the streamable-HTTP endpoint.
 *
 * @category models
 * @since 0.1.0
 */
export interface HttpOptions extends Options {
  /** Where the endpoint is mounted, e.g. `"/mcp"`. */
  readonly path: HttpRouter.PathInput
  /** Browser origins allowed to call (requests with any other `Origin` are refused; default none). */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  /** The largest request body accepted (default 1 MiB, as the `/v1` API); larger is a 413. */
  readonly maxBodyBytes?: number | undefined
  /** Live sessions at most (default 1,000); a new one then takes the place of one idle a minute, or is refused (503). */
  readonly maxSessions?: number | undefined
  /**
   * Live sessions of one client, by remote address, at most (default 100):
   * its new session ends its least recently used one beyond that, so one
   * client cannot hold the whole pool. Behind a proxy every client has the
   * proxy's address; raise it there.
   */
  readonly maxSessionsPerClient?: number | undefined
  /** A session unused this long is ended (default 30 minutes). */
  readonly sessionIdleTimeout?: Duration.Input | undefined
  /**
   * Whether a call whose client cannot elicit asks the server's pending
   * questions (`/v1/pending`, answered with the approver's token); default
   * false: such a call is denied at once.
   */
  readonly askPending?: boolean | undefined
}

/**
 * The protocol revisions served: every sessionful one `effect/ai` speaks,
 * newest first.
 *
 * @category constants
 * @since 0.1.0
 */
export const protocols = [
  McpProtocol.v2025_11_25,
  McpProtocol.v2025_06_18,
  McpProtocol.v2025_03_26,
  McpProtocol.v2024_11_05
] as const

/**
 * The `_meta` keys of a tool and of a call result.
 *
 * @category constants
 * @since 0.1.0
 */
export const MetaKeys = {
  /** The dotted AGENTESE path of a tool or call. */
  path: "ugent/path",
  /** The trust level a path needs (0 to 3), under the caller's recipe. */
  trust: "ugent/trust",
  /** Whether every call of the path waits for an approver. */
  approval: "ugent/approval",
  /** Why a call failed: its kind (`invalid_input`, `denied`, `not_found`, `conflict`, `rate_limited`, `failed`, …). */
  kind: "ugent/kind",
  /** The call's id, shared by its trace, audit record and events. */
  callId: "ugent/callId"
} as const

const defaultVersion = "0.1.0"

/**
 * The instructions sent to clients by default: how the tools expect to be
 * used (read before writing, proofs, failures).
 *
 * @category constants
 * @since 0.1.0
 */
export const instructions =
  "Every tool works inside one workspace. Read a file before you change it: this server remembers what you read in this session, so world_tools_file_write and world_tools_file_edit need no `proof` from you (a `proof` token from a read is still accepted). A result too large for your context comes back as an `overBudget` summary with a memory id: read it in parts with self_memory_read, or ask for less. A failed call returns JSON with `_tag` and a `message` that says what to do next."

/**
 * The MCP tool name of a path: its provider-safe form (`world_tools_file_read`),
 * or the dotted path itself when that form would exceed 64 characters.
 *
 * Provider-safe names are listed because LLM APIs (Anthropic, OpenAI,
 * Gemini) and strict MCP hosts accept only `^[a-zA-Z0-9_-]{1,64}$`, and a host
 * passes MCP names straight to the model; the dotted path stays visible as the
 * title and in `_meta`, and a call by the dotted path works too.
 *
 * **Example** (Names)
 * ```ts
 * import { Mcp } from "@ugent/agentese"
 * console.log(Mcp.toolName("world.tools.file.read"))
 * // => world_tools_file_read
 * ```
 *
 * @category naming
 * @since 0.1.0
 */
export const toolName: (path: string) => string = Catalog.toolName

/**
 * The path a tool name calls: a listed (provider-safe) name or the dotted
 * path itself.
 *
 * **Example** (Both names call one path)
 * ```ts
 * import { Mcp } from "@ugent/agentese"
 * import { Option } from "effect"
 * console.log(Option.getOrNull(Mcp.pathOf("world_tools_file_read")), Option.getOrNull(Mcp.pathOf("world.tools.file.read")))
 * // => world.tools.file.read world.tools.file.read
 * ```
 *
 * @category naming
 * @since 0.1.0
 */
export const pathOf: (name: string) => Option.Option<string> = Catalog.pathOf

/**
 * The MCP tool of a path, from its description (or its offer to a caller,
 * which carries the level the recipe requires and whether it needs approval).
 * Inputs are object-root JSON Schemas (a non-object input is wrapped as
 * `{ input }`); the output schema is declared only when
 * the output is an object (it is then sent as `structuredContent`), and
 * `outputSchema: false` leaves it out.
 *
 * @category describing
 * @since 0.1.0
 */
export const toMcpTool = (
  description: Description | Invoke.Offer,
  name: string = toolName(description.path),
  options: { readonly outputSchema?: boolean | undefined } = {}
) => {
  const output =
    options.outputSchema === false ? {} : (Catalog.servedOutput(description.output) as { readonly type?: unknown })
  return new McpSchema.Tool({
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
      [MetaKeys.trust]: Catalog.levelOf(description).requiredTrust,
      [MetaKeys.approval]: Catalog.levelOf(description).requiresApproval
    }
  })
}

/**
 * The MCP result of an outcome. Success: the result as JSON text, and as
 * `structuredContent` when it is an object. Failure: the failure's JSON
 * (`_tag`, `message` and its fields) as text with `isError: true`, its kind
 * and call id in `_meta`. Failures carry no `structuredContent`, since
 * clients check `structuredContent` against the tool's output schema.
 *
 * @category encoding
 * @since 0.1.0
 */
export const toCallToolResult = (outcome: Invoke.Outcome): McpSchema.CallToolResult =>
  new McpSchema.CallToolResult(toCallToolJson(outcome) as ConstructorParameters<typeof McpSchema.CallToolResult>[0])

/**
 * The JSON of {@link toCallToolResult}, as the stdio server's direct road
 * writes it (`effect/ai`'s road encodes the same through its schema).
 *
 * @category encoding
 * @since 0.2.0
 */
export const toCallToolJson = (outcome: Invoke.Outcome): Readonly<Record<string, unknown>> =>
  outcome.ok
    ? {
        content: [{ type: "text", text: Boundary.jsonText(outcome.result) }],
        ...(Catalog.isRecord(outcome.result) ? { structuredContent: outcome.result } : {}),
        isError: false,
        _meta: { [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId }
      }
    : {
        content: [{ type: "text", text: JSON.stringify(outcome.error) }],
        isError: true,
        _meta: { [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId, [MetaKeys.kind]: outcome.kind }
      }

/**
 * The whole JSON-RPC response line of a call's {@link toCallToolJson}, as
 * `JSON.stringify` would print it, but with a successful result's structured
 * content spliced in from the text already printed for its text content:
 * a large result is printed once, not twice.
 *
 * @internal
 */
export const callToolLine = (id: string | number, outcome: Invoke.Outcome): string => {
  if (!outcome.ok || !Catalog.isRecord(outcome.result)) {
    return JSON.stringify({ jsonrpc: "2.0", id, result: toCallToolJson(outcome) })
  }
  const text = Boundary.jsonText(outcome.result)
  const meta = JSON.stringify({ [MetaKeys.path]: outcome.path, [MetaKeys.callId]: outcome.callId })
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${text},"isError":false,"_meta":${meta}}}`
}

/**
 * The tool registrations of the road on an `McpServer`: every registered
 * path under its listed name and, unlisted, under its dotted path. A
 * visibility check runs `Invoker.list` for the request's caller, so a path the
 * caller is not offered is neither listed nor callable (a call fails exactly
 * like a call of an unknown tool: JSON-RPC error -32602). Calls run
 * `Invoker.invoke` with the server's caller, never with anything the request
 * claims.
 *
 * @category layers
 * @since 0.1.0
 */
export const registrations: Layer.Layer<never, never, McpServer.McpServer | Services> = Layer.suspend(() =>
  registrationsWith({ pending: Option.none() })
)

/**
 * The registrations, with the human channel of calls whose client cannot
 * elicit: the server's pending questions (over HTTP, where an operator
 * answers them), or none (on stdio: such calls are denied at once).
 *
 * @category layers
 * @since 0.2.0
 */
export const registrationsWith = (options: {
  readonly pending: Option.Option<Human.PendingShape>
  /** Whether tools declare their output schema (default false: see `Options.outputSchemas`). */
  readonly outputSchemas?: boolean | undefined
  /** This server's sessions' prefix (default a fresh one): shared with the stdio server's direct calls and the HTTP endpoint's session ends. */
  readonly instance?: string | undefined
}): Layer.Layer<never, never, McpServer.McpServer | Services> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const captured = yield* capture
      const road = yield* Invoker
      // Sessions are per MCP client of this server: what a client read, it may write without a token.
      const instance = options.instance ?? newInstance()
      // Whether the caller is offered one path: the rule `Invoker.list` applies, for that path alone.
      const offered = (path: string) =>
        within(captured)(
          Effect.gen(function* () {
            const entry = road.registry.get(path)
            return entry !== undefined && Catalog.permits(entry, yield* Observer.Observer, yield* Recipe.CurrentRecipe)
          })
        )
      // The dotted alias is callable but never listed: one entry per path in a listing.
      const gate = McpServer.visibility(({ method, target }) =>
        Option.match(Catalog.pathOf(target), {
          onNone: () => Effect.succeed(false),
          onSome: (path) =>
            method === "tools/list" && target !== toolName(path) ? Effect.succeed(false) : offered(path)
        })
      )
      const fallback = Option.map(options.pending, (p) => p.channel)
      const register = Effect.gen(function* () {
        const server = yield* McpServer.McpServer
        const services = yield* Effect.context<never>()
        const offers = new Map((yield* within(captured)(road.list)).map((o) => [o.path, o] as const))
        for (const entry of road.registry.entries) {
          const described = offers.get(entry.path) ?? road.registry.describeEntry(entry)
          const { unwrap } = Catalog.inputShape(described.input)
          const handle = (args: unknown) =>
            Effect.flatMap(Effect.serviceOption(McpSchema.McpServerClient), (client) =>
              Effect.flatMap(sessionOfRequest(instance, client), (session) =>
                within(captured)(road.invoke({ path: entry.path, input: unwrap(args ?? {}), session }))
              ).pipe(
                // The person behind this client answers its questions: by elicitation, else as the server says.
                Effect.provideService(
                  Human.Current,
                  Option.orElse(Option.flatMap(client, Human.elicitation), () => fallback)
                ),
                Effect.map(toCallToolResult)
              )
            )
          const names = new Set([toolName(entry.path), entry.path])
          for (const name of names) {
            yield* server.addTool({
              tool: toMcpTool(described, name, { outputSchema: options.outputSchemas === true }),
              annotations: Context.empty(),
              services,
              handle
            })
          }
        }
      })
      return Layer.effectDiscard(register).pipe(Layer.provide(gate.layer))
    })
  )

const newInstance = () => randomUUID().slice(0, 8)

const sessionOf = (instance: string, client: number | string) => `mcp:${instance}:${client}`

const httpSession = (instance: string, id: string) => sessionOf(instance, `http:${id}`)

/**
 * The session of a call: on streamable HTTP its `Mcp-Session-Id` (the
 * transport's client id is one per POST there, and the endpoint has refused
 * an unknown id before a tool runs), else its client (stdio's one).
 */
const sessionOfRequest = (
  instance: string,
  client: Option.Option<McpSchema.McpServerClient["Service"]>
): Effect.Effect<string | undefined> =>
  Effect.map(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (request) => {
    const id = Option.isSome(request) ? request.value.headers["mcp-session-id"] : undefined
    if (id !== undefined) return httpSession(instance, id)
    return Option.isSome(client) ? sessionOf(instance, client.value.clientId) : undefined
  })

/** The stdio transport has one client, and `effect/ai` numbers it 0. */
const stdioClient = 0

/** The protocol revisions whose results the direct road writes itself (they have `structuredContent`). */
const directProtocols: ReadonlySet<string> = new Set(
  [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18].map((p) => p.protocolVersion)
)

/**
 * The stdio server's direct road: a `tools/call` of an offered path that
 * cannot need the person behind the client in the middle of the call is
 * answered in front of `effect/ai`'s RPC server, straight from
 * `Invoker.invoke`, with the same result, the same session (proofs) and the
 * same caller. Why: an agent's reads and edits are most of its calls, and
 * this saves about a millisecond of decoding, routing and encoding on each.
 *
 * A path is served directly once the client is initialized on a protocol
 * revision with structured results, when it is offered, needs no approval
 * (recipe, irreversible tool, or an L2 caller's confirmation), and either the
 * client cannot answer questions (no `elicitation` capability: both roads
 * then deny what needs a person at once) or its family never asks
 * ({@link Families.neverAsk}). Everything else (listing, unknown or hidden
 * names, malformed calls, paths that may ask) takes `effect/ai`'s road.
 */
const directCalls = (instance: string): Effect.Effect<StdioGuard.Direct, never, Services> =>
  Effect.gen(function* () {
    const captured = yield* capture
    const road = yield* Invoker
    const observer = yield* Observer.Observer
    const offers = yield* within(captured)(road.list)
    interface Target {
      readonly path: string
      readonly unwrap: (args: unknown) => unknown
      readonly asks: boolean
    }
    const targets = new Map<string, Target>()
    for (const offer of offers) {
      const entry = road.registry.get(offer.path)
      if (entry === undefined || offer.requiresApproval || entry.tool.effects.irreversible || observer.trust === 2) {
        continue
      }
      const target = {
        path: offer.path,
        unwrap: Catalog.inputShape(offer.input).unwrap,
        asks: !Families.neverAsk.has(entry.family)
      }
      targets.set(toolName(offer.path), target)
      targets.set(offer.path, target)
    }
    const session = sessionOf(instance, stdioClient)
    let requested: string | undefined
    let canElicit = true
    let initialized = false
    return (message) => {
      switch (message.method) {
        case "initialize": {
          const params = Catalog.isRecord(message.params) ? message.params : {}
          requested = typeof params.protocolVersion === "string" ? params.protocolVersion : undefined
          canElicit = !Catalog.isRecord(params.capabilities) || params.capabilities.elicitation !== undefined
          initialized = false
          return undefined
        }
        case "notifications/initialized":
          initialized = requested !== undefined && directProtocols.has(requested)
          return undefined
        case "tools/call":
          break
        default:
          return undefined
      }
      const id = message.id
      if (!initialized || (typeof id !== "string" && typeof id !== "number") || !Catalog.isRecord(message.params)) {
        return undefined
      }
      const { name, arguments: args } = message.params
      const target = typeof name === "string" ? targets.get(name) : undefined
      if (target === undefined || (target.asks && canElicit) || (args !== undefined && !Catalog.isRecord(args))) {
        return undefined
      }
      return within(captured)(road.invoke({ path: target.path, input: target.unwrap(args ?? {}), session })).pipe(
        // As on the decoder's road for a client that cannot elicit: on stdio nobody else answers.
        Effect.provideService(Human.Current, Option.none()),
        Effect.map((outcome) => callToolLine(id, outcome))
      )
    }
  })

// Logs go to stderr: on stdio, stdout carries only JSON-RPC.
const stderrLogger = Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)])

/**
 * The MCP server over stdio (newline-delimited JSON-RPC on stdin / stdout,
 * logs on stderr), for clients that start the server as a process
 * (`ugent mcp`). Provide the server's services (`Server.layer`) and `Stdio`
 * (`NodeStdio.layer`).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerStdio = (options: Options = {}): Layer.Layer<never, never, Services | Stdio.Stdio> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const instance = newInstance()
      const direct = yield* directCalls(instance)
      return Layer.effectDiscard(
        Layer.build(
          McpServer.layerStdio({
            name: options.name ?? "ugent",
            version: options.version ?? defaultVersion,
            instructions: options.instructions ?? instructions,
            protocols,
            registrations: registrationsWith({ pending: Option.none(), outputSchemas: options.outputSchemas, instance })
          }).pipe(Layer.provide(stderrLogger), Layer.orDie)
        )
      ).pipe(
        // Garbage and odd ids get their JSON-RPC errors instead of ending the channel; direct calls are answered.
        Layer.provide(
          Layer.effect(
            Stdio.Stdio,
            Effect.flatMap(Stdio.Stdio, (stdio) =>
              StdioGuard.guard(stdio, direct, { maxMessageBytes: options.maxMessageBytes })
            )
          )
        )
      )
    })
  )

/**
 * The MCP server as a streamable-HTTP endpoint on an `HttpRouter` (sessions
 * by `Mcp-Session-Id`), e.g. at `/mcp` next to the HTTP JSON API. Provide the
 * server's services (`Server.layer`) and the router; authenticate requests
 * in the router (every caller of the endpoint is the server's configured
 * observer).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerHttp = (options: HttpOptions): Layer.Layer<never, never, Services | HttpRouter.HttpRouter> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const router = yield* HttpRouter.HttpRouter
      // Calls whose client cannot elicit ask the server's pending questions only when an operator answers them.
      const pending = options.askPending === true ? yield* Effect.serviceOption(Human.Pending) : Option.none()
      const road = yield* Invoker
      const instance = newInstance()
      const watched = McpSessions.watch(router, String(options.path), {
        maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
        maxSessions: options.maxSessions ?? 1000,
        maxSessionsPerClient: Math.max(1, options.maxSessionsPerClient ?? 100),
        idleMillis: Duration.toMillis(Duration.fromInputUnsafe(options.sessionIdleTimeout ?? "30 minutes")),
        // The proofs a session was shown go with it.
        onEnd: (id) => road.endSession(httpSession(instance, id))
      })
      const endpoint = Layer.effectDiscard(
        Layer.build(
          McpServer.layerHttp({
            name: options.name ?? "ugent",
            version: options.version ?? defaultVersion,
            instructions: options.instructions ?? instructions,
            path: options.path,
            allowedOrigins: options.allowedOrigins,
            allowSessionTermination: true,
            protocols,
            registrations: registrationsWith({ pending, outputSchemas: options.outputSchemas, instance })
          }).pipe(Layer.orDie)
        )
      ).pipe(Layer.provide(Layer.succeed(HttpRouter.HttpRouter, watched.router)))
      return Layer.merge(endpoint, watched.sweeper)
    })
  )
