/**
 * A mount serves the tools of another MCP server on the road: `ugent mcp
 * --mount fs=<command…>` (a server ugent starts, over stdio) or `--mount
 * docs=https://…/mcp` (streamable HTTP), or a recipe's `mounts`. Each tool
 * of the server is a path `world.mcp.<mount>.<tool>` on every projection, and
 * each call takes the road like any other: the recipe's allow and deny, its
 * level, plan mode, approvals, rate limits, the loop detector, the result
 * budget, audit and traces. So `ugent mcp --mount …` is a policy gateway in
 * front of any MCP server.
 *
 * - **Levels from the server's hints**: `readOnlyHint` → L0, `destructiveHint`
 *   → L3, otherwise L2 (each call confirmed for an L2 caller). A recipe's
 *   `minTrust` may raise them, never lower them.
 * - **Effects**: every mounted tool calls another server (`callsNetwork`);
 *   plan mode refuses each one its server does not mark read-only.
 * - **Inputs**: the server's JSON Schema is listed unchanged; the road checks
 *   that the arguments are a JSON object, and the server validates them
 *   against its own schema (one validator, the one that knows its dialect).
 *   The server sees exactly the arguments the caller sent: no read proof of
 *   the session is added, and a started server gets only the SDK's short list
 *   of harmless environment variables (`PATH`, `HOME`, …) and the mount's
 *   own `env`.
 * - **Results** keep their MCP content (text, images, resource links) and
 *   structured content; an `isError` result is a `MountToolFailed`.
 * - **Failures** are the call's, never the server's: a server that cannot be
 *   reached is `MountUnavailable`, an answer over `maxResultBytes` or not a
 *   tool result is `MountAnswerInvalid`; a server that exited is started
 *   again on the next call (at once, then with back-off while it fails).
 *
 * @since 0.2.0
 */
import { isAbsolute, resolve } from "node:path"
import { Family, Tool, type ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import * as Link from "./internal/mounts/link.ts"
import * as Progress from "./Progress.ts"

const Text = Schema.String.check(Schema.isMinLength(1))

/**
 * A server ugent starts and talks to over stdio: the command, its arguments,
 * the environment variables it gets besides `PATH`, `HOME` and a few
 * harmless others, and its working directory.
 *
 * @category schemas
 * @since 0.2.0
 */
export const CommandSpec = Schema.Struct({
  command: Text,
  args: Schema.optionalKey(Schema.Array(Schema.String)),
  env: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  cwd: Schema.optionalKey(Text)
})

/**
 * A server reached over streamable HTTP: an `https` URL (`http` only on a
 * loopback address), and headers sent with every request (a token).
 *
 * @category schemas
 * @since 0.2.0
 */
export const UrlSpec = Schema.Struct({
  url: Text,
  headers: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
})

/**
 * How to reach a mounted server.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Spec = Schema.Union([CommandSpec, UrlSpec])

/**
 * @category models
 * @since 0.2.0
 */
export type Spec = typeof Spec.Type

/**
 * A recipe's `mounts`: servers by mount name.
 *
 * @category schemas
 * @since 0.2.0
 */
export const RecipeMounts = Schema.Record(Schema.String, Spec)

/**
 * A mount: its name (the path segment after `world.mcp`) and its server.
 *
 * @category models
 * @since 0.2.0
 */
export interface Mount {
  readonly name: string
  readonly spec: Spec
}

/**
 * How mounts are served.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  /** The largest answer read from a server, in bytes (default 16 MiB); a larger one fails its call. */
  readonly maxResultBytes?: number | undefined
  /** How long a server may take to start and list its tools (default 30 s). */
  readonly startTimeout?: number | undefined
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/**
 * A mount cannot be served: its name or server is not valid, the server does
 * not start or cannot be reached, or its tools cannot be listed as paths.
 * Found when the server starts.
 *
 * @category errors
 * @since 0.2.0
 */
export class MountError extends Schema.TaggedError<MountError>()("MountError", {
  mount: Schema.String,
  issue: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The mount ${this.mount} ${this.issue.replace(/\.$/, "")}.`
  }
}

/**
 * A mounted tool could not be called: its server cannot be reached, exited
 * during the call, or is being started again.
 *
 * @category errors
 * @since 0.2.0
 */
export class MountUnavailable extends Schema.TaggedError<MountUnavailable>()("MountUnavailable", {
  path: Schema.String,
  mount: Schema.String,
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `${this.path} did not run: the MCP server mounted as ${this.mount} ${this.detail.replace(/\.$/, "")}. Call it again in a moment, or do without it.`
  }
}

/**
 * A mounted tool ran and its server reported an error (an `isError` result,
 * or a JSON-RPC error), in the server's own words.
 *
 * @category errors
 * @since 0.2.0
 */
export class MountToolFailed extends Schema.TaggedError<MountToolFailed>()("MountToolFailed", {
  path: Schema.String,
  mount: Schema.String,
  text: Schema.String
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return `${this.path} failed on the MCP server mounted as ${this.mount}: ${this.text}`
  }
}

/**
 * A mounted server's answer was too large, or not an MCP tool result.
 *
 * @category errors
 * @since 0.2.0
 */
export class MountAnswerInvalid extends Schema.TaggedError<MountAnswerInvalid>()("MountAnswerInvalid", {
  path: Schema.String,
  mount: Schema.String,
  detail: Schema.String,
  tooLarge: Schema.Boolean
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    const next = this.tooLarge
      ? "Ask for less in one call (a narrower query, a smaller range)."
      : "Its server is at fault; use another tool."
    return `${this.path} gave no result: the MCP server mounted as ${this.mount} ${this.detail.replace(/\.$/, "")}. ${next}`
  }
}

/**
 * How a mounted tool's call can fail.
 *
 * @category errors
 * @since 0.2.0
 */
export const Failure = Schema.Union([MountUnavailable, MountToolFailed, MountAnswerInvalid])

// ---------------------------------------------------------------------------
// Mounts from flags and recipes
// ---------------------------------------------------------------------------

const segment = /^[a-z][a-z0-9-]*$/

/** Words of a command line: whitespace apart, '…' literal, "…" with \" and \\, a backslash escaping one character. */
const words = (line: string): ReadonlyArray<string> | string => {
  const out: Array<string> = []
  let word: string | undefined
  let quote: "'" | '"' | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote === "'") {
      if (c === "'") quote = undefined
      else word += c
    } else if (quote === '"') {
      if (c === '"') quote = undefined
      else if (c === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) word += line[++i]!
      else word += c
    } else if (/\s/.test(c)) {
      if (word !== undefined) out.push(word)
      word = undefined
    } else if (c === "'" || c === '"') {
      quote = c
      word ??= ""
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i]!
    } else word = (word ?? "") + c
  }
  if (quote !== undefined) return `has an unclosed ${quote} quote`
  if (word !== undefined) out.push(word)
  return out
}

const loopbackHost = (host: string): boolean =>
  host === "localhost" || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)

/**
 * Whether a mount's name and server are well-formed: a name is one
 * lowercase path segment (`fs`, `my-notes`); a URL is `https` (or `http` on
 * a loopback address); a command is not empty.
 *
 * @category validation
 * @since 0.2.0
 */
export const check = (mount: Mount): MountError | undefined => {
  if (!segment.test(mount.name)) {
    return new MountError({
      mount: JSON.stringify(mount.name),
      issue:
        "has a name that is no path segment: use lowercase letters, digits and hyphens, starting with a letter (fs, my-notes)"
    })
  }
  const spec = mount.spec
  if ("url" in spec) {
    let url: URL
    try {
      url = new URL(spec.url)
    } catch {
      return new MountError({ mount: mount.name, issue: `has the URL ${spec.url}, which is not a URL` })
    }
    if (url.protocol !== "https:" && !(url.protocol === "http:" && loopbackHost(url.hostname))) {
      return new MountError({
        mount: mount.name,
        issue: `has the URL ${spec.url}: a mounted server is reached over https (http only on this machine: localhost, 127.0.0.1, [::1])`
      })
    }
  } else if (spec.command.trim() === "") {
    return new MountError({ mount: mount.name, issue: "has an empty command" })
  }
  return undefined
}

/**
 * Reads a `--mount` flag: `<name>=<command and arguments>` (split into words
 * as a shell would, quotes respected, nothing expanded; the command is run
 * without a shell) or `<name>=<https URL>`. A relative working directory
 * resolves from `cwd`.
 *
 * **Example** (A command and a URL)
 * ```ts
 * import { Mounts } from "@ugent/agentese"
 * console.log(Mounts.parse("memory=npx -y @modelcontextprotocol/server-memory"))
 * // => { name: 'memory', spec: { command: 'npx', args: [ '-y', '@modelcontextprotocol/server-memory' ] } }
 * console.log(Mounts.parse("docs=https://example.com/mcp"))
 * // => { name: 'docs', spec: { url: 'https://example.com/mcp' } }
 * ```
 *
 * @category parsing
 * @since 0.2.0
 */
export const parse = (flag: string): Mount | MountError => {
  const eq = flag.indexOf("=")
  if (eq <= 0) {
    return new MountError({
      mount: JSON.stringify(flag),
      issue:
        "is not <name>=<command…> or <name>=<https URL>: write it as fs=npx -y @modelcontextprotocol/server-filesystem /srv"
    })
  }
  const name = flag.slice(0, eq).trim()
  const rest = flag.slice(eq + 1).trim()
  let mount: Mount
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) mount = { name, spec: { url: rest } }
  else {
    const split = words(rest)
    if (typeof split === "string") return new MountError({ mount: name, issue: `has a command that ${split}` })
    if (split.length === 0) return new MountError({ mount: name, issue: "has an empty command" })
    mount = { name, spec: { command: split[0]!, args: split.slice(1) } }
  }
  return check(mount) ?? mount
}

/**
 * The mounts of a recipe, with relative working directories resolved from
 * the recipe's directory.
 *
 * @category parsing
 * @since 0.2.0
 */
export const fromRecipe = (
  mounts: typeof RecipeMounts.Type | undefined,
  from: string
): ReadonlyArray<Mount> | MountError => {
  const out: Array<Mount> = []
  for (const [name, spec] of Object.entries(mounts ?? {})) {
    const resolved: Spec =
      "command" in spec
        ? {
            ...spec,
            cwd: spec.cwd === undefined || isAbsolute(spec.cwd) ? (spec.cwd ?? from) : resolve(from, spec.cwd)
          }
        : spec
    const mount = { name, spec: resolved }
    const problem = check(mount)
    if (problem !== undefined) return problem
    out.push(mount)
  }
  return out
}

/**
 * Whether a value is a {@link MountError}.
 *
 * @category guards
 * @since 0.2.0
 */
export const isMountError = (u: unknown): u is MountError => u instanceof MountError

/**
 * The first problem of a list of mounts: one not well-formed, or two with
 * one name.
 *
 * @category validation
 * @since 0.2.0
 */
export const checkAll = (mounts: ReadonlyArray<Mount>): MountError | undefined => {
  const seen = new Set<string>()
  for (const mount of mounts) {
    const problem = check(mount)
    if (problem !== undefined) return problem
    if (seen.has(mount.name)) {
      return new MountError({
        mount: mount.name,
        issue:
          "is named twice: each mount needs a name of its own, since its tools are served at world.mcp.<name>.<tool>"
      })
    }
    seen.add(mount.name)
  }
  return undefined
}

// ---------------------------------------------------------------------------
// Tools of a mounted server
// ---------------------------------------------------------------------------

/**
 * The path segment of a server's tool name: words split at `_`, `.`, spaces,
 * slashes and case changes, joined by hyphens, in lowercase (`read_file` →
 * `read-file`, `getTinyImage` → `get-tiny-image`); `undefined` when nothing
 * of it makes a segment.
 *
 * **Example** (Tool names as path segments)
 * ```ts
 * import { Mounts } from "@ugent/agentese"
 * console.log(Mounts.segmentOf("read_file"), Mounts.segmentOf("getTinyImage"), Mounts.segmentOf("42"))
 * // => read-file get-tiny-image undefined
 * ```
 *
 * @category naming
 * @since 0.2.0
 */
export const segmentOf = (name: string): string | undefined => {
  const s = name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .replace(/[\s_./:]+/g, "-")
    .toLowerCase()
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "")
  return segment.test(s) ? s : undefined
}

/** The level a tool's hints give it: read-only L0, destructive L3, anything else L2. */
const levelOf = (tool: Link.ListedTool): 0 | 2 | 3 =>
  tool.annotations?.readOnlyHint === true ? 0 : tool.annotations?.destructiveHint === true ? 3 : 2

// The parts are the server's, parsed from its JSON: passed on as they came.
const Part = Schema.Record(Schema.String, Schema.Unknown)

/**
 * What a mounted tool returns: the server's content parts (text, images,
 * resource links, as MCP has them) and its structured content, if any.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Result = Schema.Struct({
  content: Schema.Array(Part),
  structuredContent: Schema.optionalKey(Part)
})

const maxSchemaChars = 256 * 1024

const schemaProblem = (schema: Readonly<Record<string, unknown>>): string | undefined => {
  if (schema.type !== "object") return 'its input schema is not an object schema (type "object")'
  const properties = schema.properties
  if (properties !== undefined && (typeof properties !== "object" || properties === null || Array.isArray(properties)))
    return "its input schema's properties are not an object"
  let text: string | undefined
  try {
    text = JSON.stringify(schema)
  } catch {
    return "its input schema is not JSON"
  }
  if (text.length > maxSchemaChars) return `its input schema has more than ${maxSchemaChars} characters`
  return undefined
}

const textOf = (output: typeof Result.Type): number =>
  output.content.reduce((n, part) => n + (typeof part.text === "string" ? part.text.length : 0), 0)

/**
 * The family of a mount: its server started (or reached) when the family is
 * built, its tools listed as paths under `world.mcp.<name>`, each calling the
 * server. Building fails with a {@link MountError} that names the mount and
 * what to do; the server stops when the family's scope closes.
 *
 * @category families
 * @since 0.2.0
 */
export const family = (mount: Mount, options: Options = {}): Family.Family<never, MountError> => {
  const prefix = `world.mcp.${mount.name}`
  const fail = (issue: string) => Effect.fail(new MountError({ mount: mount.name, issue }))
  return {
    [Family.TypeId]: Family.TypeId,
    name: `mcp:${mount.name}`,
    prefix,
    build: Effect.gen(function* () {
      const problem = check(mount)
      if (problem !== undefined) return yield* Effect.fail(problem)
      const link = yield* Link.open(mount.spec, {
        maxResultBytes: options.maxResultBytes ?? 16 * 1024 * 1024,
        startMillis: options.startTimeout ?? 30_000
      }).pipe(
        Effect.mapError((failure) => new MountError({ mount: mount.name, issue: `could not start: ${failure.detail}` }))
      )
      const members: Record<string, Family.Member> = {}
      const names = new Map<string, string>()
      for (const listed of link.tools) {
        const name = listed.name
        const seg = segmentOf(name)
        if (seg === undefined) {
          return yield* fail(
            `lists a tool named ${JSON.stringify(name)}, which gives no path segment (letters, digits, hyphens, starting with a letter): ask its server to rename it, or mount another server`
          )
        }
        const other = names.get(seg)
        if (other !== undefined) {
          return yield* fail(
            `lists the tools ${JSON.stringify(other)} and ${JSON.stringify(name)}, which are both served as ${prefix}.${seg}: a path has one tool, so mount a server whose tool names differ by more than case and separators`
          )
        }
        names.set(seg, name)
        const schemaIssue = schemaProblem(listed.inputSchema)
        if (schemaIssue !== undefined) return yield* fail(`lists the tool ${JSON.stringify(name)}, but ${schemaIssue}`)
        const path = `${prefix}.${seg}`
        const hints = listed.annotations ?? {}
        const readOnly = hints.readOnlyHint === true
        const toError = (failure: Link.Failure) =>
          failure.reason === "tool"
            ? new MountToolFailed({ path, mount: mount.name, text: failure.detail })
            : failure.reason === "unavailable"
              ? new MountUnavailable({ path, mount: mount.name, detail: failure.detail })
              : new MountAnswerInvalid({
                  path,
                  mount: mount.name,
                  detail: failure.detail,
                  tooLarge: failure.reason === "too-large"
                })
        const tool = Tool.make({
          name: `${mount.name}.${seg}`,
          description:
            listed.description ?? listed.title ?? `The tool ${name} of the MCP server mounted as ${mount.name}.`,
          input: Schema.JsonObject,
          output: Result,
          failure: Failure,
          trust: levelOf(listed),
          effects: { callsNetwork: true, idempotent: readOnly || hints.idempotentHint === true },
          run: (args) =>
            Effect.flatMap(Progress.Current, (report) => {
              if (report === Progress.none) return Effect.mapError(link.call(name, args), toError)
              // The server's progress goes on to the caller in order, and all of it before the result.
              let told = Promise.resolve()
              const tell = (p: Progress.Report) => {
                told = told.then(() => Effect.runPromise(report(p)))
              }
              return Effect.mapError(link.call(name, args, tell), toError).pipe(
                Effect.ensuring(Effect.promise(() => told))
              )
            })
        })
        members[seg] = {
          // Its only service is the link it closes over; the call brings the capabilities.
          tool: tool as unknown as Family.Closed,
          present: (output) => {
            const result = output as typeof Result.Type
            return {
              summary: `${name} of the MCP server mounted as ${mount.name} (${link.server.name}) returned ${result.content.length} content parts, ${textOf(result)} characters of text`
            }
          },
          foreign: {
            server: mount.name,
            name,
            inputSchema: listed.inputSchema,
            readOnly,
            destructive: hints.destructiveHint === true,
            idempotent: hints.idempotentHint === true,
            openWorld: hints.openWorldHint !== false
          }
        }
      }
      return members
    })
  }
}
