/**
 * Several callers on one server: each named by its credential (a bearer
 * token), each with its own trust level, recipe, rate limits and result
 * budget, all in one configuration file (`ugent serve --callers
 * callers.json`). A token is never kept: the file holds its SHA-256
 * (`tokenSha256`), or names the environment variable (`tokenEnv`) or file
 * (`tokenFile`) it is read from, and the server keeps only the digest. The
 * HTTP guard turns a request's credential into its caller
 * ({@link Identified}); the JSON API and the MCP endpoint call as that
 * caller, made once, so the road's rate limits, loop keys and audit rows are
 * its own.
 *
 * **Example** (Two callers)
 * ```ts
 * import { Callers } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { createHash } from "node:crypto"
 * const sha = (s: string) => createHash("sha256").update(s).digest("hex")
 * const callers = Effect.runSync(
 *   Callers.decode({
 *     callers: [
 *       { id: "student", trust: "L0", tokenSha256: sha("student-token-0123456789"), rateLimits: { perMinute: 2 } },
 *       { id: "teacher", trust: "L1", tokenSha256: sha("teacher-token-0123456789"), rateLimits: { perMinute: 20 } }
 *     ]
 *   })
 * )
 * console.log(Callers.identify(callers, "teacher-token-0123456789")?.id)
 * // => teacher
 * ```
 *
 * @since 0.2.0
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { readFile } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import { Observer, type ToolError, type Trust } from "@ugent/core"
import { Context, Effect, Schema } from "effect"
import * as Recipe from "./Recipe.ts"

const Level = Schema.Union([Schema.Literals([0, 1, 2, 3]), Schema.Literals(["L0", "L1", "L2", "L3"])])

/**
 * One caller in the file.
 *
 * @category schemas
 * @since 0.2.0
 */
export const CallerJson = Schema.Struct({
  /** Its id in traces, audit rows, rate limits and statistics. */
  id: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9._@-]{1,64}$/)),
  /** Its trust level (default L0). */
  trust: Schema.optionalKey(Level),
  /** The SHA-256 of its token, in hex (`printf %s "$TOKEN" | sha256sum`). */
  tokenSha256: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^[0-9a-fA-F]{64}$/))),
  /** An environment variable holding its token. */
  tokenEnv: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  /** A file holding its token (relative to this file), its trailing newline ignored. */
  tokenFile: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  /** Its recipe: a file (relative to this file) or the recipe itself (default: the server's). */
  recipe: Schema.optionalKey(Schema.Union([Schema.String.check(Schema.isMinLength(1)), Recipe.RecipeSchema])),
  /** Its rate limits, over its recipe's (`rateLimits`). */
  rateLimits: Schema.optionalKey(Recipe.LimitsSchema),
  /** Its result budget in estimated tokens, over its recipe's (`resultBudgetTokens`). */
  budgetTokens: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(100))),
  /** Its project: a workspace of its own (relative to this file), served by a road of its own (default: the server's). */
  root: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
})

/**
 * What a callers file holds.
 *
 * @category schemas
 * @since 0.2.0
 */
export const CallersJson = Schema.Struct({ callers: Schema.Array(CallerJson).check(Schema.isMinLength(1)) })

/**
 * A caller the server knows, with the context its calls run with, made once
 * (the road makes its caller once per observer and recipe). Its token is not
 * kept, only the token's digest.
 *
 * @category models
 * @since 0.2.0
 */
export interface Configured {
  readonly id: string
  readonly trust: Trust.TrustLevel
  readonly recipe: Recipe.Recipe
  /** The SHA-256 of its token. */
  readonly digest: Uint8Array
  /** Its project's workspace, when not the server's (an absolute path). */
  readonly root?: string | undefined
  /** Its observer and recipe, as services (and its project's road, once the server made it: {@link onRoad}). */
  readonly context: Context.Context<Observer.Observer | Recipe.CurrentRecipe>
}

/**
 * The caller on its project's road: the road's services (the invoker, its
 * events, stores and registry) under the caller's observer and recipe.
 *
 * @category constructors
 * @since 0.2.0
 */
export const onRoad = (caller: Configured, road: Context.Context<never>): Configured => ({
  ...caller,
  context: Context.merge(road, caller.context) as Context.Context<Observer.Observer | Recipe.CurrentRecipe>
})

/**
 * The callers file did not load: unreadable, not JSON, not well-formed, a
 * token missing or weak, an id or a token given twice.
 *
 * @category errors
 * @since 0.2.0
 */
export class CallersError extends Schema.TaggedError<CallersError>()("CallersError", {
  file: Schema.String,
  issue: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The callers file ${this.file} is not valid: ${this.issue}. It is JSON such as {"callers": [{"id": "student", "trust": "L0", "tokenEnv": "STUDENT_TOKEN", "rateLimits": {"perMinute": 2}}]}.`
  }
}

/**
 * The caller a request's credential named, when the server has callers:
 * set by the HTTP guard, read by the JSON API and the MCP endpoint.
 *
 * @category services
 * @since 0.2.0
 */
export const Identified = Context.Reference<Configured | undefined>("ugent/agentese/Callers/Identified", {
  defaultValue: () => undefined
})

/** The fields of a recipe that shape the whole server (its families), so one caller's would be ignored. */
const serverWide = ["families", "mounts", "blocked", "allowHosts", "shell", "shellNetwork"] as const

/** The shortest token taken from the environment or a file: a guessable token is no credential. */
const minTokenLength = 16

const digestOf = (token: string): Uint8Array => createHash("sha256").update(token).digest()

/**
 * Decodes a callers file's JSON; `base` is the recipe of a caller that names
 * none (the server's), `from` the directory its files are relative to.
 *
 * @category decoding
 * @since 0.2.0
 */
export const decode = (
  json: unknown,
  options: {
    readonly file?: string | undefined
    readonly base?: Recipe.Recipe | undefined
    readonly env?: Readonly<Record<string, string | undefined>> | undefined
  } = {}
): Effect.Effect<ReadonlyArray<Configured>, CallersError> =>
  Effect.gen(function* () {
    const file = options.file ?? "<callers>"
    const from = options.file === undefined ? process.cwd() : dirname(resolve(options.file))
    const fail = (issue: string) => Effect.fail(new CallersError({ file, issue }))
    // A plain token in the file would be a secret at rest: say what to write instead.
    const list = (json as { readonly callers?: unknown } | null)?.callers
    if (Array.isArray(list)) {
      const plain = list.find((c) => typeof c === "object" && c !== null && "token" in c) as
        | { id?: unknown }
        | undefined
      if (plain !== undefined) {
        return yield* fail(
          `caller ${String(plain.id)} has its token in the file; write its SHA-256 as tokenSha256, or name an environment variable (tokenEnv) or a file (tokenFile) holding it`
        )
      }
    }
    const parsed = yield* Schema.decodeUnknownEffect(CallersJson)(json, {
      errors: "all",
      onExcessProperty: "error"
    }).pipe(Effect.mapError((e) => new CallersError({ file, issue: e.message.replace(/\s*\n\s*/g, " ") })))
    const env = options.env ?? process.env
    const out: Array<Configured> = []
    const ids = new Set<string>()
    for (const c of parsed.callers) {
      if (ids.has(c.id)) return yield* fail(`the id ${c.id} is given twice`)
      ids.add(c.id)
      const sources = [c.tokenSha256, c.tokenEnv, c.tokenFile].filter((s) => s !== undefined).length
      if (sources !== 1) {
        return yield* fail(
          `caller ${c.id} needs exactly one of tokenSha256, tokenEnv and tokenFile (it has ${sources})`
        )
      }
      let digest: Uint8Array
      if (c.tokenSha256 !== undefined) digest = Buffer.from(c.tokenSha256, "hex")
      else {
        const token =
          c.tokenEnv !== undefined
            ? env[c.tokenEnv]
            : yield* Effect.tryPromise(() => readFile(resolve(from, c.tokenFile!), "utf8")).pipe(
                Effect.map((s) => s.replace(/\r?\n$/, "")),
                Effect.catch(() => Effect.succeed(undefined))
              )
        const where = c.tokenEnv !== undefined ? `the environment variable ${c.tokenEnv}` : `the file ${c.tokenFile}`
        if (token === undefined || token === "") return yield* fail(`caller ${c.id}: ${where} holds no token`)
        if (token.length < minTokenLength) {
          return yield* fail(`caller ${c.id}: the token in ${where} is shorter than ${minTokenLength} characters`)
        }
        digest = digestOf(token)
      }
      if (out.some((o) => timingSafeEqual(o.digest, digest))) {
        return yield* fail(
          `caller ${c.id} has the token of caller ${out.find((o) => timingSafeEqual(o.digest, digest))!.id}`
        )
      }
      let recipe: Recipe.Recipe = options.base ?? Recipe.allowAll
      if (typeof c.recipe === "string") {
        recipe = yield* Recipe.load(resolve(from, c.recipe)).pipe(
          Effect.mapError((e) => new CallersError({ file, issue: `caller ${c.id}: ${e.message}` }))
        )
      } else if (c.recipe !== undefined) recipe = c.recipe
      const wide = serverWide.filter((k) => recipe !== options.base && recipe[k] !== undefined)
      if (wide.length > 0) {
        return yield* fail(
          `caller ${c.id}'s recipe sets ${wide.join(", ")}, which shape the whole server; set them in the server's recipe (--recipe)`
        )
      }
      recipe = {
        ...recipe,
        ...(c.rateLimits !== undefined ? { rateLimits: c.rateLimits } : {}),
        ...(c.budgetTokens !== undefined ? { resultBudgetTokens: c.budgetTokens } : {})
      }
      const trust = (typeof c.trust === "string" ? Number(c.trust.slice(1)) : (c.trust ?? 0)) as Trust.TrustLevel
      const observer = Observer.Observer.of({ id: c.id, trust })
      const context = Context.add(Context.make(Observer.Observer, observer), Recipe.CurrentRecipe, recipe)
      out.push({
        id: c.id,
        trust,
        recipe,
        digest,
        context,
        ...(c.root !== undefined ? { root: resolve(from, c.root) } : {})
      })
    }
    return out
  })

/**
 * Loads a callers file.
 *
 * @category decoding
 * @since 0.2.0
 */
export const load = (
  file: string,
  options: { readonly base?: Recipe.Recipe | undefined } = {}
): Effect.Effect<ReadonlyArray<Configured>, CallersError> =>
  Effect.tryPromise({
    try: async () => JSON.parse(await readFile(file, "utf8")) as unknown,
    catch: (e) =>
      new CallersError({
        file,
        issue:
          (e as { readonly code?: unknown }).code === "ENOENT"
            ? "the file does not exist"
            : e instanceof SyntaxError
              ? `it is not JSON (${e.message})`
              : e instanceof Error
                ? e.message
                : String(e)
      })
  }).pipe(Effect.flatMap((json) => decode(json, { file, base: options.base })))

/**
 * The caller a presented token names, compared by digest in constant time
 * (every caller is compared, so the time says nothing of which matched).
 *
 * @category identifying
 * @since 0.2.0
 */
export const identify = (callers: ReadonlyArray<Configured>, token: string): Configured | undefined => {
  const given = digestOf(token)
  let found: Configured | undefined
  for (const c of callers) if (timingSafeEqual(c.digest, given) && found === undefined) found = c
  return found
}
