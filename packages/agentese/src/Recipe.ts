/**
 * A `Recipe` is the policy of a room: which paths a caller may see and call
 * (allow / deny patterns, deny wins), which need a human's approval, how many
 * calls one model response may make, rate limits, and a minimum trust per
 * path that raises a tool's level (never lowers it). It is JSON, validated by
 * its schema. What `list` offers is computed by {@link decide}, the same check
 * `invoke` enforces, so offer and permission never drift.
 *
 * @since 0.1.0
 */

import type { ToolError } from "@ugent/core"
import { readFile } from "node:fs/promises"
import { Context, Effect, Layer, Schema } from "effect"
import { RecipeMounts } from "./Mounts.ts"
import { matches } from "./Path.ts"

const Level = Schema.Literals([0, 1, 2, 3])

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/**
 * Rate limits of one scope: calls per minute and per hour (0 refuses every
 * call), and a burst allowance above the per-minute limit.
 *
 * @category schemas
 * @since 0.2.0
 */
export const LimitsSchema = Schema.Struct({
  perMinute: Schema.optionalKey(Count),
  perHour: Schema.optionalKey(Count),
  /** Calls allowed at once above `perMinute` (default 0). */
  burst: Schema.optionalKey(Count)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Limits = typeof LimitsSchema.Type

const Limits = LimitsSchema

/**
 * The schema of a recipe.
 *
 * @category schemas
 * @since 0.1.0
 */
export const RecipeSchema = Schema.Struct({
  name: Schema.optionalKey(Schema.String),
  /** Patterns of paths the caller may use; default `["*"]`. */
  allow: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Patterns of paths the caller may not use; deny wins over allow. */
  deny: Schema.optionalKey(Schema.Array(Schema.String)),
  /** Patterns of paths every call of which waits for an approver. */
  requireApproval: Schema.optionalKey(Schema.Array(Schema.String)),
  /**
   * How long an approval request stays answerable, in seconds (default 24
   * hours, at most 30 days): past it the request is expired, and an
   * approval given before it is no longer used.
   */
  approvalExpirySeconds: Schema.optionalKey(
    Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(30 * 86_400))
  ),
  /** How many calls one model response may make (EXECUTE lines, tool_call blocks, pipeline steps). */
  maxCallsPerResponse: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  /** The profile whose defaults apply where this recipe says nothing: `local` (one agent), `team` (a few people's agents) or `shared` (a room). */
  profile: Schema.optionalKey(Schema.Literals(["local", "team", "shared"])),
  /** Rate limits over every caller and path. */
  globalRateLimits: Schema.optionalKey(Limits),
  /** Rate limits of this caller, over all paths. */
  rateLimits: Schema.optionalKey(Limits),
  /** Rate limits of this caller per path pattern (the first matching pattern applies). */
  toolRateLimits: Schema.optionalKey(Schema.Record(Schema.String, Limits)),
  /** A minimum trust level per path pattern: raises the tool's own level, never lowers it. */
  minTrust: Schema.optionalKey(Schema.Record(Schema.String, Level)),
  /** Each call's time limit, in seconds. */
  timeoutSeconds: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(3600))),
  /** The loop detector: a call repeated `count` times with the same result and nothing written is refused; `false` turns it off. */
  loop: Schema.optionalKey(
    Schema.Union([
      Schema.Literal(false),
      Schema.Struct({
        count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(2)),
        windowSeconds: Schema.Number.check(Schema.isGreaterThan(0))
      })
    ])
  ),
  /**
   * Hosts the web tools may reach although their addresses are private or
   * local (`"127.0.0.1:8080"`, `"intranet.example"`, `"10.0.0.0/8"`): every
   * other private, loopback, link-local or metadata address stays refused.
   */
  allowHosts: Schema.optionalKey(Schema.Array(Schema.String)),
  /**
   * Plain shell commands (`system.bash`) allowed below L3: a call whose
   * every command matches a pattern (`"git status"`, `"npm test"`, `"git
   * diff *"`) needs `level`; any other command line needs L3.
   */
  shell: Schema.optionalKey(
    Schema.Struct({
      level: Schema.Literals([1, 2, 3]),
      commands: Schema.Array(Schema.String)
    })
  ),
  /**
   * Names no tool reads, writes or lists and a shell command sees empty
   * (picomatch globs, as the workspace's blocked names: `"*.sqlite"`,
   * `"config/prod/**"`). They are added to the built-in names of files that
   * hold secrets (environment files, keys, credential stores), `.git` and
   * `.ugent`, which no recipe removes. The server's recipe sets them for
   * its workspace.
   */
  blocked: Schema.optionalKey(
    Schema.Array(
      Schema.String.check(
        Schema.isPattern(/^[^!]/, {
          message: "a blocked pattern adds names and cannot start with ! (the built-in secret names cannot be removed)"
        })
      )
    )
  ),
  /** Whether shell commands may use the network (default false: the sandbox has none). */
  shellNetwork: Schema.optionalKey(Schema.Boolean),
  /**
   * The lines a `file.read` shows when the call names no end (`limit` or
   * `endLine`): a persona's per-read budget (the `shared` profile's is the
   * documents' 500; otherwise the tool's 2,000).
   */
  maxLines: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  /** The largest result a call returns, in estimated tokens (characters / 4); a larger one goes to working memory. */
  resultBudgetTokens: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(100))),
  /**
   * Modules whose default export is a tool family, served after the
   * built-in ones: files (`"./families/notes.ts"`) relative to the recipe's
   * directory, or packages resolved from there as Node's `import` would.
   */
  families: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isMinLength(1)))),
  /**
   * MCP servers whose tools are served at `world.mcp.<name>.<tool>`, by
   * name: `{"command": "npx", "args": [...], "env": {...}, "cwd": "."}` (a
   * relative `cwd` from the recipe's directory) or `{"url": "https://…",
   * "headers": {...}}` (see `Mounts`).
   */
  mounts: Schema.optionalKey(RecipeMounts)
}).annotate({ title: "Recipe", description: "The policy of a room: what a caller may see and call." })

/**
 * A recipe: the JSON fields of {@link RecipeSchema}, and, for a recipe made
 * with {@link narrow}, the recipe it lies within.
 *
 * @category models
 * @since 0.1.0
 */
export interface Recipe extends RecipeJson {
  /** A recipe this one lies within: a path is allowed only if both allow it (see {@link narrow}). */
  readonly within?: Recipe | undefined
}

/**
 * What a recipe file holds.
 *
 * @category models
 * @since 0.2.0
 */
export type RecipeJson = typeof RecipeSchema.Type

/**
 * The recipe that allows every path (still subject to trust).
 *
 * @category constants
 * @since 0.1.0
 */
export const allowAll: Recipe = { name: "allow-all", allow: ["*"] }

/**
 * The recipe in force for the current caller, as a service.
 *
 * @category services
 * @since 0.1.0
 */
export class CurrentRecipe extends Context.Service<CurrentRecipe, Recipe>()("ugent/agentese/Recipe") {}

/**
 * A layer providing a recipe.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (recipe: Recipe): Layer.Layer<CurrentRecipe> => Layer.succeed(CurrentRecipe, recipe)

/**
 * A recipe file did not load: unreadable, not JSON, or not a recipe.
 *
 * @category errors
 * @since 0.1.0
 */
export class RecipeError extends Schema.TaggedError<RecipeError>()("RecipeError", {
  file: Schema.String,
  issue: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The recipe ${this.file} is not valid: ${this.issue}. A recipe is JSON such as {"allow": ["world.tools.file.*"], "deny": ["world.tools.file.write"]}.`
  }
}

/**
 * Decodes a recipe from unknown JSON.
 *
 * @category decoding
 * @since 0.1.0
 */
export const decode = (json: unknown, file = "<recipe>"): Effect.Effect<Recipe, RecipeError> =>
  Schema.decodeUnknownEffect(RecipeSchema)(json, { errors: "all", onExcessProperty: "error" }).pipe(
    Effect.mapError((e) => new RecipeError({ file, issue: e.message.replace(/\s*\n\s*/g, " ") }))
  )

/**
 * Loads a recipe from a JSON file.
 *
 * @category decoding
 * @since 0.1.0
 */
export const load = (file: string): Effect.Effect<Recipe, RecipeError> =>
  Effect.tryPromise({
    try: async () => JSON.parse(await readFile(file, "utf8")) as unknown,
    catch: (e) => {
      const code = (e as { readonly code?: unknown }).code
      const issue =
        code === "ENOENT"
          ? "the file does not exist"
          : code === "EACCES"
            ? "the file cannot be read (permission denied)"
            : code === "EISDIR"
              ? "it is a directory, not a file"
              : e instanceof SyntaxError
                ? `it is not JSON (${e.message})`
                : e instanceof Error
                  ? e.message
                  : String(e)
      return new RecipeError({ file, issue })
    }
  }).pipe(Effect.flatMap((json) => decode(json, file)))

/**
 * What the recipe says of a path.
 *
 * @category models
 * @since 0.1.0
 */
export type Decision =
  | {
      readonly _tag: "Allowed"
      /** The level the call needs: the tool's own, raised by `minTrust`. */
      readonly requiredTrust: 0 | 1 | 2 | 3
      readonly approval: boolean
    }
  | { readonly _tag: "Denied"; readonly reason: string }

/**
 * Decides whether a path may be used under a recipe, and at which level.
 * `list` and `invoke` both call this.
 *
 * **Example** (Deny wins; minimum trust raises)
 * ```ts
 * import { Recipe } from "@ugent/agentese"
 * const recipe = { allow: ["world.tools.*"], deny: ["world.tools.git.*"], minTrust: { "world.tools.file.*": 1 as const } }
 * console.log(Recipe.decide(recipe, "world.tools.git.log", 0)._tag)
 * // => Denied
 * console.log(Recipe.decide(recipe, "world.tools.file.read", 0))
 * // => { _tag: 'Allowed', requiredTrust: 1, approval: false }
 * ```
 *
 * @category policy
 * @since 0.1.0
 */
export const decide = (recipe: Recipe, path: string, toolTrust: 0 | 1 | 2 | 3): Decision => {
  const own = decideOwn(recipe, path, toolTrust)
  if (recipe.within === undefined || own._tag === "Denied") return own
  // Within another recipe: both must allow, at the higher level, asking for approval if either does.
  const outer = decide(recipe.within, path, toolTrust)
  if (outer._tag === "Denied") return { _tag: "Denied", reason: `the recipe it lies within: ${outer.reason}` }
  return {
    _tag: "Allowed",
    requiredTrust: outer.requiredTrust > own.requiredTrust ? outer.requiredTrust : own.requiredTrust,
    approval: own.approval || outer.approval
  }
}

const decideOwn = (recipe: Recipe, path: string, toolTrust: 0 | 1 | 2 | 3): Decision => {
  const deny = (recipe.deny ?? []).find((p) => matches(p, path))
  if (deny !== undefined) return { _tag: "Denied", reason: `the recipe denies ${deny}` }
  const allow = recipe.allow ?? ["*"]
  if (!allow.some((p) => matches(p, path))) {
    return { _tag: "Denied", reason: "the recipe does not allow this path" }
  }
  let requiredTrust = toolTrust
  for (const [pattern, level] of Object.entries(recipe.minTrust ?? {})) {
    if (matches(pattern, path) && level > requiredTrust) requiredTrust = level
  }
  const approval = (recipe.requireApproval ?? []).some((p) => matches(p, path))
  return { _tag: "Allowed", requiredTrust, approval }
}

/**
 * The limits that apply to a path under a recipe: the caller's own and those
 * of the first pattern matching the path.
 *
 * @category policy
 * @since 0.1.0
 */
export const limitsFor = (
  recipe: Recipe,
  path: string
): {
  readonly caller: Limits | undefined
  readonly tool: Limits | undefined
} => ({
  caller: recipe.rateLimits,
  tool: Object.entries(recipe.toolRateLimits ?? {}).find(([p]) => matches(p, path))?.[1]
})

/**
 * A recipe within another: the child may narrow what the parent allows (its
 * own `allow`, `deny`, `requireApproval`, `minTrust`, fewer calls per
 * response) and never widen it, since {@link decide} asks both; limits and
 * other settings are the parent's. What a sub-agent runs under.
 *
 * **Example** (A child cannot allow what its parent denies)
 * ```ts
 * import { Recipe } from "@ugent/agentese"
 * const parent = { allow: ["world.tools.*"], deny: ["world.tools.file.write"] }
 * const child = Recipe.narrow(parent, { allow: ["*"], deny: ["world.tools.git.*"] })
 * console.log(["world.tools.file.read", "world.tools.file.write", "world.tools.git.log", "self.tools.task.list"].map((p) => Recipe.decide(child, p, 0)._tag))
 * // => [ 'Allowed', 'Denied', 'Denied', 'Denied' ]
 * ```
 *
 * @category policy
 * @since 0.2.0
 */
export const narrow = (
  parent: Recipe,
  child: Pick<RecipeJson, "name" | "allow" | "deny" | "requireApproval" | "minTrust" | "maxCallsPerResponse">
): Recipe => {
  const max =
    child.maxCallsPerResponse === undefined
      ? parent.maxCallsPerResponse
      : Math.min(child.maxCallsPerResponse, parent.maxCallsPerResponse ?? child.maxCallsPerResponse)
  return {
    ...parent,
    name: child.name ?? `${parent.name ?? "recipe"} (narrowed)`,
    allow: child.allow ?? ["*"],
    deny: child.deny ?? [],
    requireApproval: child.requireApproval ?? [],
    minTrust: child.minTrust ?? {},
    ...(max === undefined ? {} : { maxCallsPerResponse: max }),
    within: parent
  }
}
