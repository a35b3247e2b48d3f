/**
 * The errors every tool may meet at its boundary: bad input, a trust level too
 * low, an approval refused, a rule no level unlocks, a proof that no longer
 * holds. Each is a `Schema.TaggedError` whose `message` is written for the
 * person or model reading it (what went wrong, and what to do next), with the
 * structured fields beside it. {@link toJson} encodes any of them, with its
 * message, for a protocol boundary.
 *
 * @since 0.1.0
 */
import { Cause, Predicate, Schema } from "effect"
import { levelName, type TrustLevel } from "./internal/level.ts"

/** A path as it may be shown in a message: control characters escaped, so a NUL byte is visible. */
const shownPath = (path: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: escaping control characters is the point
  path.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)

/**
 * The schema of a trust level, `0 | 1 | 2 | 3`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const TrustLevelSchema = Schema.Literals([0, 1, 2, 3])

/**
 * What kind of failure an error is, declared on its class (a static `kind`)
 * so every projection maps it the same way, without matching tag strings:
 *
 * | kind | meaning | HTTP | counts against a circuit breaker |
 * |---|---|---|---|
 * | `invalid_input` | the request cannot be applied as given | 400 | no |
 * | `parse` | model text or a pipeline did not parse | 400 | no |
 * | `denied` | a policy, trust level, approval or jail refused it | 403 | no |
 * | `not_found` | the thing named does not exist | 404 | no |
 * | `conflict` | the world is not as the caller assumed (a stale proof) | 409 | no |
 * | `rate_limited` | too many calls, or a loop | 429 | no |
 * | `failed` | the tool ran and failed on its own terms | 422 | yes |
 * | `unavailable` | a dependency is down or a circuit open | 503 | yes |
 * | `timeout` | the call ran out of time | 504 | yes |
 *
 * An error without a `kind` is `failed`.
 *
 * @category kinds
 * @since 0.2.0
 */
export type Kind =
  | "invalid_input"
  | "parse"
  | "denied"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "failed"
  | "unavailable"
  | "timeout"

/**
 * The schema of a {@link Kind}.
 *
 * @category kinds
 * @since 0.2.0
 */
export const KindSchema = Schema.Literals([
  "invalid_input",
  "parse",
  "denied",
  "not_found",
  "conflict",
  "rate_limited",
  "failed",
  "unavailable",
  "timeout"
])

const kinds: ReadonlySet<string> = new Set(KindSchema.literals)

/**
 * The kind of any failure value: its class's `kind`, else `failed`.
 *
 * **Example** (Kinds live on the class)
 * ```ts
 * import { ToolError } from "@ugent/core"
 * console.log(ToolError.kindOf(new ToolError.TrustDenied({ tool: "file.write", required: 1, actual: 0 })))
 * // => denied
 * console.log(ToolError.kindOf(new Error("boom")))
 * // => failed
 * ```
 *
 * @category kinds
 * @since 0.2.0
 */
export const kindOf = (error: unknown): Kind => {
  if (Predicate.isObject(error)) {
    const kind = (error.constructor as { readonly kind?: unknown } | undefined)?.kind
    if (typeof kind === "string" && kinds.has(kind)) return kind as Kind
  }
  if (Cause.isTimeoutError(error)) return "timeout"
  return "failed"
}

/**
 * Whether a failure is the tool's own fault (`failed`, `unavailable`,
 * `timeout`), as opposed to a caller's mistake or a refusal. Circuit breakers
 * count only these.
 *
 * @category kinds
 * @since 0.2.0
 */
export const isToolFault = (error: unknown): boolean => {
  const kind = kindOf(error)
  return kind === "failed" || kind === "unavailable" || kind === "timeout"
}

/**
 * The input did not decode against the tool's input schema.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { ToolError } from "@ugent/core"
 * const e = new ToolError.InvalidInput({ tool: "file.read", issues: "Missing key\n  at [\"path\"]" })
 * console.log(e.message)
 * // => Invalid input for file.read: Missing key at ["path"]. Check the input against the tool's input schema (describe the tool to see it) and call again.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  tool: Schema.String,
  issues: Schema.String
}) {
  static readonly kind: Kind = "invalid_input"
  override get message(): string {
    return `Invalid input for ${this.tool}: ${oneLine(this.issues)}. Check the input against the tool's input schema (describe the tool to see it) and call again.`
  }
}

/**
 * The input has keys the tool does not take (its input is a closed object):
 * refused rather than ignored, so a call such as `{ path, startLine, endLine }`
 * to a reader that takes `offset` and `limit` does not silently return the
 * whole file. It names the keys the tool takes and the one each unknown key
 * most likely means.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { ToolError } from "@ugent/core"
 * const e = new ToolError.UnknownArguments({ tool: "file.read", at: "", unknown: ["startLine", "endLine"], known: ["path", "offset", "limit"], suggestions: { startLine: "offset", endLine: "limit" } })
 * console.log(e.message)
 * // => file.read takes path, offset, limit; it does not take startLine, endLine. Did you mean offset (for startLine), limit (for endLine)? Call again with only the keys it takes.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class UnknownArguments extends Schema.TaggedError<UnknownArguments>()("UnknownArguments", {
  tool: Schema.String,
  /** Where the object with unknown keys is in the input (`edits[0]`), or `""` for the input itself. */
  at: Schema.String,
  unknown: Schema.Array(Schema.String),
  known: Schema.Array(Schema.String),
  /** For an unknown key, the known key it most likely means. */
  suggestions: Schema.Record(Schema.String, Schema.String)
}) {
  static readonly kind: Kind = "invalid_input"
  override get message(): string {
    const where = this.at === "" ? this.tool : `${this.tool} at ${this.at}`
    const takes = this.known.length === 0 ? `${where} takes no keys` : `${where} takes ${this.known.join(", ")}`
    const meant = this.unknown.flatMap((u) => {
      const k = this.suggestions[u]
      return k === undefined ? [] : [`${k} (for ${u})`]
    })
    const hint = meant.length === 0 ? "" : ` Did you mean ${meant.join(", ")}?`
    return `${takes}; it does not take ${this.unknown.join(", ")}.${hint} Call again with only the keys it takes.`
  }
}

/**
 * The caller's trust level is below what the tool (or this input) requires.
 *
 * @category errors
 * @since 0.1.0
 */
export class TrustDenied extends Schema.TaggedError<TrustDenied>()("TrustDenied", {
  tool: Schema.String,
  required: TrustLevelSchema,
  actual: TrustLevelSchema,
  reason: Schema.optionalKey(Schema.String)
}) {
  static readonly kind: Kind = "denied"
  override get message(): string {
    const why = this.reason === undefined ? "" : ` (${this.reason})`
    return `${this.tool} needs trust ${levelName(this.required)}${why}, but the caller has ${levelName(this.actual as TrustLevel)}. Use a read-only alternative, or ask the operator to raise the caller's trust level.`
  }
}

/**
 * A confirmation was asked for and not given: refused, or not answered in time
 * (a timeout is a denial).
 *
 * @category errors
 * @since 0.1.0
 */
export class ApprovalDenied extends Schema.TaggedError<ApprovalDenied>()("ApprovalDenied", {
  tool: Schema.String,
  reason: Schema.Literals(["denied", "timeout", "no-approver"]),
  timeoutMillis: Schema.optionalKey(Schema.Int)
}) {
  static readonly kind: Kind = "denied"
  override get message(): string {
    const messages: Record<typeof this.reason, string> = {
      denied: `${this.tool} was not approved: the reviewer refused this call. Do not retry it as is; explain what you want to do, or choose another approach.`,
      timeout: `${this.tool} was not approved: no answer within ${this.timeoutMillis ?? 0} ms, and a timeout counts as a denial. Ask the user before trying again.`,
      "no-approver": `${this.tool} needs a confirmation, but no approver is configured, so it is denied. Run it with a higher trust level or configure an approver.`
    }
    return messages[this.reason]
  }
}

/**
 * The call matched a rule that no trust level unlocks (secrets, `.git/`
 * internals, destructive shell patterns).
 *
 * @category errors
 * @since 0.1.0
 */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  tool: Schema.String,
  rule: Schema.String,
  detail: Schema.String
}) {
  static readonly kind: Kind = "denied"
  override get message(): string {
    return `${this.tool} refused: ${this.detail} (rule "${this.rule}"). No trust level allows this; choose another target.`
  }
}

/**
 * A path, or what it resolves to through symbolic links, is not inside the
 * workspace root. One class for every package that checks containment (the
 * workspace jail of `@ugent/tools`, the working directory of `Sandboxed`), so
 * a projection sees one tag.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { ToolError } from "@ugent/core"
 * console.log(new ToolError.OutsideWorkspace({ path: "../etc/passwd", reason: "outside" }).message)
 * // => ../etc/passwd is outside the workspace. Use a path inside it (relative paths resolve against the workspace root); find files with file.glob or file.list.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class OutsideWorkspace extends Schema.TaggedError<OutsideWorkspace>()("OutsideWorkspace", {
  path: Schema.String,
  reason: Schema.Literals(["outside", "symlink-target", "parent"])
}) {
  static readonly kind: Kind = "denied"
  override get message(): string {
    const p = shownPath(this.path)
    const messages: Record<typeof this.reason, string> = {
      outside: `${p} is outside the workspace. Use a path inside it (relative paths resolve against the workspace root); find files with file.glob or file.list.`,
      "symlink-target": `${p} resolves through a symbolic link to a place outside the workspace, so it cannot be used. Use a file that lies inside the workspace.`,
      parent: `The directory of ${p} resolves outside the workspace (through a symbolic link), so nothing can be created there. Choose a directory inside the workspace.`
    }
    return messages[this.reason]
  }
}

/**
 * A command line was refused by a shell-text policy before anything ran. Such
 * a policy is a friendly first refusal, never the boundary (shell text can
 * always be re-spelled); the message says what to do instead.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { ToolError } from "@ugent/core"
 * const e = new ToolError.CommandDenied({ tool: "system.bash", command: "ls && sudo rm x", subcommand: "sudo rm x", rule: "privilege", detail: "it runs sudo, which raises privileges" })
 * console.log(e.message)
 * // => system.bash refused the command: it runs sudo, which raises privileges (in "sudo rm x", rule privilege). Nothing was run. Use allowed programs without this pattern, or ask the user to run it.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class CommandDenied extends Schema.TaggedError<CommandDenied>()("CommandDenied", {
  tool: Schema.String,
  command: Schema.String,
  subcommand: Schema.String,
  rule: Schema.String,
  detail: Schema.String
}) {
  static readonly kind: Kind = "denied"
  override get message(): string {
    return `${this.tool} refused the command: ${this.detail} (in "${this.subcommand}", rule ${this.rule}). Nothing was run. Use allowed programs without this pattern, or ask the user to run it.`
  }
}

/**
 * Several branches of `Tool.all` failed; every failure is reported, with the
 * key of its branch.
 *
 * @category errors
 * @since 0.1.0
 */
export interface AllFailed<out E> {
  readonly _tag: "AllFailed"
  readonly failures: ReadonlyArray<{ readonly key: string; readonly error: E }>
  readonly message: string
}

class AllFailedImpl<E> extends Error implements AllFailed<E> {
  readonly _tag = "AllFailed" as const
  readonly failures: ReadonlyArray<{ readonly key: string; readonly error: E }>
  constructor(failures: ReadonlyArray<{ readonly key: string; readonly error: E }>) {
    super()
    this.failures = failures
    Object.defineProperty(this, "message", {
      get: () =>
        `${failures.length} branch(es) failed: ${failures.map((f) => `[${f.key}] ${messageOf(f.error)}`).join("; ")}`,
      enumerable: false
    })
  }
}

/**
 * Builds an {@link AllFailed} error.
 *
 * @category constructors
 * @since 0.1.0
 */
export const allFailed = <E>(failures: ReadonlyArray<{ readonly key: string; readonly error: E }>): AllFailed<E> =>
  new AllFailedImpl(failures)

/**
 * The schema of {@link AllFailed} whose branch errors are described by `member`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const AllFailedSchema = <S extends Schema.Top>(member: S) =>
  Schema.Struct({
    _tag: Schema.tag("AllFailed"),
    failures: Schema.Array(Schema.Struct({ key: Schema.String, error: member }))
  })

/**
 * Whether a value is an {@link AllFailed} error.
 *
 * @category guards
 * @since 0.1.0
 */
export const isAllFailed = (u: unknown): u is AllFailed<unknown> => u instanceof AllFailedImpl

/**
 * The encoded JSON form of a tool failure at a boundary: its tag, its
 * structured fields and its message.
 *
 * @category models
 * @since 0.1.0
 */
export interface FailureJson {
  readonly _tag: string
  readonly message: string
  readonly [field: string]: unknown
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, " ").trim()

/**
 * The message of any failure value, for a person or a model.
 *
 * @category utils
 * @since 0.1.0
 */
export const messageOf = (error: unknown): string => {
  if (Predicate.hasProperty(error, "message") && typeof error.message === "string" && error.message !== "") {
    return error.message
  }
  if (Predicate.isTagged(error, "TimeoutError") || Cause.isTimeoutError(error)) return "The call timed out."
  return String(error)
}

/**
 * Encodes a failure to JSON: `{ _tag, message, ...fields }`. The fields come
 * from `encoded` (the failure encoded by its schema) when given, else from the
 * error's own enumerable fields.
 *
 * @category encoding
 * @since 0.1.0
 */
export const toJson = (error: unknown, encoded?: unknown): FailureJson => {
  const tag = Predicate.hasProperty(error, "_tag") && typeof error._tag === "string" ? error._tag : "UnknownError"
  const fields =
    encoded !== undefined && typeof encoded === "object" && encoded !== null
      ? (encoded as Record<string, unknown>)
      : typeof error === "object" && error !== null
        ? Object.fromEntries(Object.entries(error).filter(([k]) => k !== "stack" && k !== "cause"))
        : {}
  return { ...fields, _tag: tag, message: messageOf(error) }
}

/**
 * Whether a failure may succeed if the same call is tried again: errors say
 * so with a `retryable: true` field. Refusals and caller mistakes (kinds
 * `invalid_input`, `parse`, `denied`, `not_found`, `rate_limited`) never are,
 * whatever they say, and neither are errors whose class has a static
 * `retryable = false`.
 *
 * @category retrying
 * @since 0.1.0
 */
export const isRetryable = (error: unknown): boolean => {
  if (!Predicate.isObject(error)) return false
  if (neverRetried.has(kindOf(error))) return false
  // A class may say its errors are never retried, whatever an instance claims (an open circuit).
  if ((error.constructor as { readonly retryable?: unknown } | undefined)?.retryable === false) return false
  return (error as { readonly retryable?: unknown }).retryable === true
}

const neverRetried: ReadonlySet<Kind> = new Set(["invalid_input", "parse", "denied", "not_found", "rate_limited"])

/**
 * The delay a server asked for before the next try (a `retryAfterMillis`
 * field), if any.
 *
 * @category retrying
 * @since 0.1.0
 */
export const retryAfterMillis = (error: unknown): number | undefined => {
  if (!Predicate.isObject(error)) return undefined
  const ms = (error as { readonly retryAfterMillis?: unknown }).retryAfterMillis
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : undefined
}
