/**
 * The MCP projection: the `invoke` road served as a Model Context Protocol
 * server over stdio or streamable HTTP, by one lean JSON-RPC server of our
 * own (`internal/mcp/`) that speaks what the official SDK client uses
 * (initialize on every revision served, ping, tools, cancellation,
 * elicitation). A client sees exactly the paths its caller is offered
 * (`Invoker.list`), each under a provider-safe name (`world_tools_file_read`)
 * with the dotted path as its title and in `_meta`; every call goes through
 * `Invoker.invoke`. A result comes back as text made for the client's model
 * (`Render`: a read is the file's lines under a one-line header, listings
 * one entry per line, diffs unified) within what that client passes to its
 * model whole (`Budget.forClient`, from the name it gives at `initialize`),
 * with ugent's JSON as `structuredContent`; a typed failure comes back as a
 * plain line, what to do next and its details, with `isError: true` and its
 * JSON in `_meta["ugent/error"]`.
 *
 * @since 0.1.0
 */
import { realpathSync, statSync } from "node:fs"
import { sep } from "node:path"
import { fileURLToPath } from "node:url"
import { ToolError } from "@ugent/core"
import { type Context, Duration, Effect, Layer, Logger, Option, type Scope, type Stdio } from "effect"
import type { HttpRouter } from "effect/http"
import * as Catalog from "../Catalog.ts"
import * as Human from "../Human.ts"
import * as McpHttp from "../internal/mcp/http.ts"
import * as McpServer from "../internal/mcp/server.ts"
import * as McpStdio from "../internal/mcp/stdio.ts"
import type * as Invoke from "../Invoke.ts"
import type { Description } from "../Registry.ts"
import type * as Render from "../Render.ts"

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
  /**
   * How often a call the client follows (`_meta.progressToken`) says it is
   * still running (default 5 seconds). A shell or network call says it
   * started at once, any other once it has run a second.
   */
  readonly progressInterval?: Duration.Input | undefined
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
  /** Live sessions of one client (by its address) at most (default 100); its oldest gives way to a new one. */
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
 * The protocol revisions served, newest first.
 *
 * @category constants
 * @since 0.1.0
 */
export const protocols: ReadonlyArray<string> = McpServer.protocolVersions

/**
 * The `_meta` keys of a tool and of a call result.
 *
 * @category constants
 * @since 0.1.0
 */
export const MetaKeys = McpServer.MetaKeys

const defaultVersion = "0.1.0"

/**
 * The instructions sent to clients by default: how the tools expect to be
 * used (read before writing, proofs, failures).
 *
 * @category constants
 * @since 0.1.0
 */
export const instructions =
  "Every tool works inside one workspace. Read a file before you change it: this server remembers what you read in this session, so world_tools_file_write and world_tools_file_edit need no `proof` from you. A result larger than your client passes to you whole comes back as a summary with a memory id: read it in parts with self_memory_read, or ask for less. A failed call begins with the error's name and what went wrong, then what to do next."

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
 * A tool as MCP lists it.
 *
 * @category models
 * @since 0.2.0
 */
export type McpTool = McpServer.McpTool

/**
 * The MCP tool of a path, from its description (or its offer to a caller,
 * which carries the level the recipe requires and whether it needs approval).
 * Inputs are object-root JSON Schemas (a non-object input is wrapped as
 * `{ input }`); the output schema is declared only when asked for and the
 * output is an object (it is then sent as `structuredContent`).
 *
 * @category describing
 * @since 0.1.0
 */
export const toMcpTool = (
  description: Description | Invoke.Offer,
  name: string = toolName(description.path),
  options: { readonly outputSchema?: boolean | undefined } = {}
): McpTool => McpServer.toMcpTool(description, name, options.outputSchema !== false)

/**
 * The MCP result JSON of an outcome. Success: the text the road made for the
 * model (else the result's JSON) as text, and the result as
 * `structuredContent` when it is an object. Failure: the failure as a model
 * reads it (`Render.failure`: its tag and first sentence, what to do next,
 * its details) with `isError: true`; its JSON (`_tag`, `message`, fields),
 * kind and call id in `_meta`. Failures carry no `structuredContent`, since
 * clients check `structuredContent` against the tool's output schema.
 *
 * @category encoding
 * @since 0.2.0
 */
export const toCallToolJson = (outcome: Invoke.Outcome, audience?: Render.Audience): McpServer.CallToolJson =>
  McpServer.callToolJson(outcome, true, audience)

const infoOf = (options: Options): McpServer.Info => ({
  name: options.name ?? "ugent",
  version: options.version ?? defaultVersion,
  instructions: options.instructions ?? instructions,
  outputSchemas: options.outputSchemas === true,
  progressMillis: Duration.toMillis(Duration.fromInputUnsafe(options.progressInterval ?? "5 seconds"))
})

/**
 * One MCP connection on the road, for any transport: `receive` takes one
 * parsed JSON-RPC message and gives the reply line of a request (or nothing
 * for a notification or a response); `send` is how the server writes to the
 * client outside a reply (its questions, by elicitation). Closing the scope
 * ends the connection's calls.
 *
 * @category connections
 * @since 0.2.0
 */
export const connection = (
  options: Options & {
    readonly send: (line: string) => Effect.Effect<void>
    /** Who answers a question when the client cannot (default: nobody, the call is denied). */
    readonly fallback?: Option.Option<Human.Channel> | undefined
  }
): Effect.Effect<McpServer.Connection, never, Services | Scope.Scope> =>
  Effect.flatMap(McpServer.servicesInContext, (services) =>
    McpServer.connect({
      info: infoOf(options),
      send: options.send,
      fallback: options.fallback ?? Option.none(),
      services
    })
  )

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
  Layer.effectDiscard(Effect.forkScoped(runStdio(options)))

/**
 * The MCP server over stdio as an effect that ends when the client closes
 * stdin (after the calls in flight are answered): what `ugent mcp` runs.
 *
 * @category running
 * @since 0.2.0
 */
export const runStdio = (options: Options = {}): Effect.Effect<void, never, Services | Stdio.Stdio> =>
  Effect.flatMap(McpServer.servicesInContext, (services) =>
    McpStdio.serve({ info: infoOf(options), maxMessageBytes: options.maxMessageBytes, services })
  ).pipe(Effect.scoped, Effect.provide(stderrLogger))

/**
 * The workspace root an MCP client's roots (`roots/list`) name for a server
 * started in `cwd`: of the roots that are `file:` URIs of existing
 * directories, the innermost one that holds `cwd` (the client started the
 * server inside its project), else the first; `undefined` when none is.
 *
 * **Example** (A client's project root)
 * ```ts
 * import { Mcp } from "@ugent/agentese"
 * import { mkdtempSync, mkdirSync, realpathSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * import { pathToFileURL } from "node:url"
 * const project = realpathSync(mkdtempSync(join(tmpdir(), "project-")))
 * mkdirSync(join(project, "src"))
 * const roots = [{ uri: "https://example.com/" }, { uri: pathToFileURL(project).href, name: "project" }]
 * console.log(Mcp.rootOf(roots, join(project, "src")) === project, Mcp.rootOf([{ uri: "file:///no/such/dir" }], project))
 * // => true undefined
 * ```
 *
 * @category roots
 * @since 0.2.0
 */
export const rootOf = (roots: unknown, cwd: string): string | undefined => {
  const dirs = (Array.isArray(roots) ? roots : []).flatMap((root: unknown) => {
    const uri = Catalog.isRecord(root) ? root.uri : undefined
    if (typeof uri !== "string" || !uri.startsWith("file:")) return []
    try {
      const path = fileURLToPath(uri)
      return statSync(path).isDirectory() ? [realpathSync(path)] : []
    } catch {
      return []
    }
  })
  let here = cwd
  try {
    here = realpathSync(cwd)
  } catch {
    // A current directory that is gone holds no root.
  }
  const holding = dirs.filter((d) => here === d || here.startsWith(d.endsWith(sep) ? d : `${d}${sep}`))
  return holding.sort((a, b) => b.length - a.length)[0] ?? dirs[0]
}

/**
 * The MCP server over stdio, on the root its client names: for a client that
 * reports roots (`capabilities.roots`), the server asks `roots/list` once the
 * client has initialized and serves {@link rootOf} its roots; for any other,
 * or when the client names none within five seconds, `root`. The server's
 * services are made then, from `layer` (what `ugent mcp` runs without
 * `--root`). A root named later (`roots/list_changed`) does not move a
 * running server. A server that cannot start answers each request with why.
 *
 * @category running
 * @since 0.2.0
 */
export const runStdioRooted = (
  options: Options & {
    /** The root when the client names none (default: the current directory). */
    readonly root?: string | undefined
    /** The server's services on a root. */
    readonly layer: (root: string) => Layer.Layer<Services, unknown>
  }
): Effect.Effect<void, never, Stdio.Stdio> =>
  McpStdio.serve({
    info: infoOf(options),
    maxMessageBytes: options.maxMessageBytes,
    services: (hello) =>
      Effect.gen(function* () {
        const fallback = options.root ?? process.cwd()
        const listed =
          hello.capabilities.roots === undefined
            ? undefined
            : yield* hello.request("roots/list", {}).pipe(
                Effect.timeoutOption(5_000),
                Effect.map(Option.getOrUndefined),
                Effect.catch(() => Effect.succeed(undefined))
              )
        const named = rootOf(listed?.roots, fallback)
        const root = named ?? fallback
        yield* Effect.logInfo(`ugent: serving ${root}${named === undefined ? "" : " (the client's root)"}`)
        const context = yield* Layer.build(options.layer(root)).pipe(
          Effect.mapError((e) => ToolError.messageOf(e) || String(e))
        )
        // The context holds the server's services (`Services`), which the connection reads as an opaque context.
        return context as Context.Context<never>
      })
  }).pipe(Effect.scoped, Effect.provide(stderrLogger))

// Logs go to stderr: on stdio, stdout carries only JSON-RPC.
const stderrLogger = Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)])

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
      // Calls whose client cannot elicit ask the server's pending questions only when an operator answers them.
      const pending = options.askPending === true ? yield* Effect.serviceOption(Human.Pending) : Option.none()
      return McpHttp.layer({
        info: infoOf(options),
        path: String(options.path),
        allowedOrigins: options.allowedOrigins ?? [],
        maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
        maxSessions: options.maxSessions ?? 1000,
        maxSessionsPerClient: options.maxSessionsPerClient ?? 100,
        idleMillis: Duration.toMillis(Duration.fromInputUnsafe(options.sessionIdleTimeout ?? "30 minutes")),
        fallback: Option.map(pending, (p) => p.channel)
      })
    })
  )
