/**
 * A `Profile` is a set of defaults for the road, chosen for who is calling:
 *
 * - `local`: one agent on its own machine (an MCP server in an editor, a
 *   shell user). No rate limits; loop protection on; the default of `ugent
 *   mcp`, `ugent invoke` and `ugent exec`.
 * - `team`: a few people's agents on one server (the default of `ugent
 *   serve`). Limits that stop a runaway loop, not a working session: 600
 *   calls a minute and 20,000 an hour over everyone; 120 a minute (with a
 *   burst of 30) and 3,000 an hour per caller; no limit per tool.
 * - `shared`: many agents in one room, untrusted or metered. The design
 *   documents' room limits: 100 calls a minute and 2,000 an hour over
 *   everyone; 10 a minute (with a burst of 3) and 200 an hour per caller;
 *   and per caller, 5 reads and 3 searches a minute; a read shows 500 lines
 *   unless the call names its end.
 *
 * Every setting (the limits of each scope, the timeout, the loop window, the
 * result budget) can be changed by the recipe, and again by the host's
 * options (the CLI's flags), which win.
 *
 * @since 0.2.0
 */
import type { Limit } from "@ugent/wrappers"
import { Duration, Option, Schema } from "effect"
import type * as Recipe from "./Recipe.ts"

/**
 * @category models
 * @since 0.2.0
 */
export type Profile = "local" | "team" | "shared"

/**
 * The profiles, for flags and validation.
 *
 * @category constants
 * @since 0.2.0
 */
export const profiles: ReadonlyArray<Profile> = ["local", "team", "shared"]

/**
 * The loop detector's settings: a call is refused once the same call gave
 * the same result `count` times within `windowMillis`, with nothing written
 * in between.
 *
 * @category models
 * @since 0.2.0
 */
export interface LoopSettings {
  readonly count: number
  readonly windowMillis: number
}

/**
 * The road's settings for one caller.
 *
 * @category models
 * @since 0.2.0
 */
export interface Settings {
  readonly profile: Profile
  /** Over every caller and path. */
  readonly global: ReadonlyArray<Limit>
  /** Per caller, over all paths. */
  readonly caller: ReadonlyArray<Limit>
  /** Per caller and path, by path pattern (the first matching pattern applies). */
  readonly tool: ReadonlyArray<readonly [pattern: string, limits: ReadonlyArray<Limit>]>
  readonly timeoutMillis: number
  /** `undefined`: no loop detection. */
  readonly loop: LoopSettings | undefined
  /** The largest result returned whole, in estimated tokens (characters / 4). */
  readonly budgetTokens: number
  /**
   * Whether the recipe or the host set the budget. When they did not, an MCP
   * client gets what it passes to its model whole (see `Budget.forClient`)
   * in place of `budgetTokens`.
   */
  readonly budgetFixed: boolean
  /** The lines a `file.read` shows when the call names no end; `undefined`: the tool's own default. */
  readonly maxLines: number | undefined
}

/**
 * What a host may set over the profile and the recipe (each setting left out
 * keeps theirs).
 *
 * @category models
 * @since 0.2.0
 */
export interface Overrides {
  readonly profile?: Profile | undefined
  readonly global?: ReadonlyArray<Limit> | undefined
  readonly caller?: ReadonlyArray<Limit> | undefined
  readonly tool?: ReadonlyArray<readonly [pattern: string, limits: ReadonlyArray<Limit>]> | undefined
  readonly timeout?: Duration.Input | undefined
  /** `false` turns loop detection off. */
  readonly loop?: LoopSettings | false | undefined
  readonly budgetTokens?: number | undefined
}

const minute = "1 minute" as const
const hour = "1 hour" as const

const common = {
  timeoutMillis: 120_000,
  loop: { count: 3, windowMillis: 60_000 },
  budgetTokens: 25_000,
  budgetFixed: false,
  maxLines: undefined
} as const

/**
 * The defaults of each profile.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaults: Readonly<Record<Profile, Settings>> = {
  local: { profile: "local", global: [], caller: [], tool: [], ...common },
  team: {
    profile: "team",
    global: [
      { limit: 600, window: minute },
      { limit: 20_000, window: hour }
    ],
    caller: [
      { limit: 120, window: minute, burst: 30 },
      { limit: 3000, window: hour }
    ],
    tool: [],
    ...common
  },
  shared: {
    profile: "shared",
    global: [
      { limit: 100, window: minute },
      { limit: 2000, window: hour }
    ],
    caller: [
      { limit: 10, window: minute, burst: 3 },
      { limit: 200, window: hour }
    ],
    tool: [
      ["world.tools.file.read", [{ limit: 5, window: minute }]],
      ["world.tools.search.*", [{ limit: 3, window: minute }]]
    ],
    ...common,
    // The documents' per-read budget for a persona in a room.
    maxLines: 500
  }
}

/**
 * The limits a recipe's `{ perMinute, perHour, burst }` stands for.
 *
 * @category conversions
 * @since 0.2.0
 */
export const limitsOf = (limits: Recipe.Limits): ReadonlyArray<Limit> => [
  ...(limits.perMinute !== undefined ? [{ limit: limits.perMinute, window: minute, burst: limits.burst ?? 0 }] : []),
  ...(limits.perHour !== undefined ? [{ limit: limits.perHour, window: hour }] : [])
]

/**
 * The settings for a caller: the profile's defaults (the host's profile, else
 * the recipe's, else `fallback`), then the recipe's settings, then the
 * host's overrides.
 *
 * **Example** (A shared room whose recipe allows more calls per caller)
 * ```ts
 * import { Profile } from "@ugent/agentese"
 * const s = Profile.settings({ profile: "shared", rateLimits: { perMinute: 30 } }, {}, "local")
 * console.log(s.profile, s.caller, s.global.length)
 * // => shared [ { limit: 30, window: '1 minute', burst: 0 } ] 2
 * ```
 *
 * @category settings
 * @since 0.2.0
 */
export const settings = (recipe: Recipe.Recipe, overrides: Overrides = {}, fallback: Profile = "local"): Settings => {
  const profile = overrides.profile ?? recipe.profile ?? fallback
  const base = defaults[profile]
  const fromRecipe: Partial<Omit<Settings, "profile">> = {
    ...(recipe.globalRateLimits !== undefined ? { global: limitsOf(recipe.globalRateLimits) } : {}),
    ...(recipe.rateLimits !== undefined ? { caller: limitsOf(recipe.rateLimits) } : {}),
    ...(recipe.toolRateLimits !== undefined
      ? { tool: Object.entries(recipe.toolRateLimits).map(([p, l]) => [p, limitsOf(l)] as const) }
      : {}),
    ...(recipe.timeoutSeconds !== undefined ? { timeoutMillis: recipe.timeoutSeconds * 1000 } : {}),
    ...(recipe.loop !== undefined
      ? {
          loop:
            recipe.loop === false
              ? undefined
              : { count: recipe.loop.count, windowMillis: recipe.loop.windowSeconds * 1000 }
        }
      : {}),
    ...(recipe.resultBudgetTokens !== undefined ? { budgetTokens: recipe.resultBudgetTokens, budgetFixed: true } : {}),
    ...(recipe.maxLines !== undefined ? { maxLines: recipe.maxLines } : {})
  }
  const fromHost: Partial<Omit<Settings, "profile">> = {
    ...(overrides.global !== undefined ? { global: overrides.global } : {}),
    ...(overrides.caller !== undefined ? { caller: overrides.caller } : {}),
    ...(overrides.tool !== undefined ? { tool: overrides.tool } : {}),
    ...(overrides.timeout !== undefined
      ? { timeoutMillis: Duration.toMillis(Duration.fromInputUnsafe(overrides.timeout)) }
      : {}),
    ...(overrides.loop !== undefined ? { loop: overrides.loop === false ? undefined : overrides.loop } : {}),
    ...(overrides.budgetTokens !== undefined ? { budgetTokens: overrides.budgetTokens, budgetFixed: true } : {})
  }
  return { ...base, ...fromRecipe, ...fromHost, profile }
}

const unitMillis: Readonly<Record<string, number>> = {
  s: 1000,
  sec: 1000,
  second: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000
}

/**
 * Parses limits written as `10/min+3,200/h` (calls per window, an optional
 * burst after `+`; windows `s`, `min`, `h`); `none` is no limit.
 *
 * **Example** (Parsing)
 * ```ts
 * import { Profile } from "@ugent/agentese"
 * console.log(Profile.parseLimits("10/min+3,200/h"))
 * // => { _id: 'Option', _tag: 'Some', value: [ { limit: 10, window: 60000, burst: 3 }, { limit: 200, window: 3600000, burst: 0 } ] }
 * ```
 *
 * @category parsing
 * @since 0.2.0
 */
export const parseLimits = (text: string): Option.Option<ReadonlyArray<Limit>> => {
  const trimmed = text.trim()
  if (trimmed === "none" || trimmed === "") return Option.some([])
  const out: Array<Limit> = []
  for (const part of trimmed.split(",")) {
    const m = /^\s*(\d+)\s*\/\s*([a-z]+)\s*(?:\+\s*(\d+))?\s*$/.exec(part)
    const window = m === null ? undefined : unitMillis[m[2]!]
    if (m === null || window === undefined) return Option.none()
    out.push({ limit: Number(m[1]), window, burst: m[3] === undefined ? 0 : Number(m[3]) })
  }
  return Option.some(out)
}

/**
 * Parses a loop setting written as `3/1min` (refused after 3 identical
 * results within a minute) or `off`.
 *
 * @category parsing
 * @since 0.2.0
 */
export const parseLoop = (text: string): Option.Option<LoopSettings | false> => {
  const trimmed = text.trim()
  if (trimmed === "off" || trimmed === "false") return Option.some(false)
  const m = /^(\d+)\s*\/\s*(\d+(?:\.\d+)?)?\s*([a-z]+)$/.exec(trimmed)
  const unit = m === null ? undefined : unitMillis[m[3]!]
  if (m === null || unit === undefined || Number(m[1]) < 2) return Option.none()
  return Option.some({ count: Number(m[1]), windowMillis: Number(m[2] ?? "1") * unit })
}

/**
 * The settings as JSON, for `ugent serve` to say what it runs and for
 * `GET /v1/stats`.
 *
 * @category schemas
 * @since 0.2.0
 */
export const SettingsJson = Schema.Struct({
  profile: Schema.Literals(["local", "team", "shared"]),
  global: Schema.Array(Schema.String),
  caller: Schema.Array(Schema.String),
  tool: Schema.Record(Schema.String, Schema.Array(Schema.String)),
  timeoutMillis: Schema.Number,
  loop: Schema.NullOr(Schema.Struct({ count: Schema.Int, windowMillis: Schema.Number })),
  budgetTokens: Schema.Int,
  /** The lines a read shows when the call names no end, when the profile or recipe sets it. */
  maxLines: Schema.optionalKey(Schema.Int)
})

const showLimit = (l: Limit): string => {
  const ms = Duration.toMillis(Duration.fromInputUnsafe(l.window))
  const window = ms === 60_000 ? "min" : ms === 3_600_000 ? "h" : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`
  return `${l.limit}/${window}${l.burst ? `+${l.burst}` : ""}`
}

/**
 * A one-line account of the settings, e.g. for `ugent serve`'s start line.
 *
 * **Example** (The shared profile)
 * ```ts
 * import { Profile } from "@ugent/agentese"
 * console.log(Profile.describe(Profile.defaults.shared))
 * // => profile shared: global 100/min, 2000/h; per caller 10/min+3, 200/h; per tool world.tools.file.read 5/min, world.tools.search.* 3/min; timeout 120 s; loops after 3 repeats in 60 s; results up to 25000 tokens; reads of 500 lines
 * ```
 *
 * @category describing
 * @since 0.2.0
 */
export const describe = (s: Settings): string => {
  const list = (ls: ReadonlyArray<Limit>) => (ls.length === 0 ? "none" : ls.map(showLimit).join(", "))
  const tool = s.tool.length === 0 ? "none" : s.tool.map(([p, ls]) => `${p} ${list(ls)}`).join(", ")
  const loop =
    s.loop === undefined
      ? "loop detection off"
      : `loops after ${s.loop.count} repeats in ${s.loop.windowMillis / 1000} s`
  return `profile ${s.profile}: global ${list(s.global)}; per caller ${list(s.caller)}; per tool ${tool}; timeout ${s.timeoutMillis / 1000} s; ${loop}; results up to ${s.budgetTokens} tokens${s.maxLines === undefined ? "" : `; reads of ${s.maxLines} lines`}`
}

/**
 * The settings as JSON.
 *
 * @category describing
 * @since 0.2.0
 */
export const toJson = (s: Settings): typeof SettingsJson.Type => ({
  profile: s.profile,
  global: s.global.map(showLimit),
  caller: s.caller.map(showLimit),
  tool: Object.fromEntries(s.tool.map(([p, ls]) => [p, ls.map(showLimit)])),
  timeoutMillis: s.timeoutMillis,
  loop: s.loop ?? null,
  budgetTokens: s.budgetTokens,
  ...(s.maxLines === undefined ? {} : { maxLines: s.maxLines })
})
