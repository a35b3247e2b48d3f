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
import { Context, Duration, Effect, Layer, Option, Schema, type Stdio } from "effect"
import { McpProtocol, McpSchema, McpServer } from "effect/ai"
import { HttpRouter } from "effect/http"
import * as Catalog from "../Catalog.ts"
import * as Human from "../Human.ts"
import { capture, within } from "../internal/captured.ts"
import * as McpSessions from "../internal/mcpSessions.ts"
import * as McpStdio from "../internal/mcp/stdio.ts"
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
  /** The largest message read, in bytes (default 8 MiB); a larger one is answered with an error and skipped. */
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
  /** This server's sessions' prefix (default a fresh one): shared with the stdio server's direct calls. */
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
              within(captured)(
                road.invoke({
                  path: entry.path,
                  input: unwrap(args ?? {}),
                  session: Option.isSome(client) ? sessionOf(instance, client.value.clientId) : undefined
                })
              ).pipe(
                // The person behind this client answers its questions: by elicitation, else as the server says.
                Effect.provideService(
                  Human.Current,
                  Option.orElse(Option.flatMap(client, elicitationOf), () => fallback)
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

/** The elicitation channel of an `effect/ai` client that can show forms. */
const elicitationOf = (client: McpSchema.McpServerClient["Service"]): Option.Option<Human.Channel> =>
  client.clientCapabilities.elicitation === undefined
    ? Option.none()
    : Option.some(
        Human.elicitation((params) =>
          Effect.scoped(
            Effect.gen(function* () {
              const request = yield* Schema.decodeUnknownEffect(McpSchema.ElicitRequestFormParams)({
                mode: "form",
                ...params
              })
              const reverse = yield* client.getClient
              return (yield* reverse.elicit(request)) as unknown as Readonly<Record<string, unknown>>
            })
          )
        )
      )

const sessionOf = (instance: string, clientId: number) => `mcp:${instance}:${clientId}`

/**
 * The MCP server over stdio (newline-delimited JSON-RPC on stdin / stdout,
 * logs on stderr), for clients that start the server as a process
 * (`ugent mcp`). Provide the server's services (`Server.layer`) and `Stdio`
 * (`NodeStdio.layer`). One connection, on the road: every call is
 * `Invoker.invoke` for the server's caller, in one session.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerStdio = (options: Options = {}): Layer.Layer<never, never, Services | Stdio.Stdio> =>
  Layer.effectDiscard(
    Effect.forkScoped(
      McpStdio.serve({
        info: {
          name: options.name ?? "ugent",
          version: options.version ?? defaultVersion,
          instructions: options.instructions ?? instructions,
          outputSchemas: options.outputSchemas === true
        },
        maxMessageBytes: options.maxMessageBytes
      }).pipe(Effect.scoped)
    )
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
      const watched = McpSessions.watch(router, String(options.path), {
        maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
        maxSessions: options.maxSessions ?? 1000,
        idleMillis: Duration.toMillis(Duration.fromInputUnsafe(options.sessionIdleTimeout ?? "30 minutes"))
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
            registrations: registrationsWith({ pending, outputSchemas: options.outputSchemas })
          }).pipe(Layer.orDie)
        )
      ).pipe(Layer.provide(Layer.succeed(HttpRouter.HttpRouter, watched.router)))
      return Layer.merge(endpoint, watched.sweeper)
    })
  )
