/**
 * A `Route` is one path as one caller's recipe and settings serve it, made
 * before the first call: the registered tool, the recipe's decision, the
 * limits that apply, the time limit, and only the stages the settings need
 * (under the `local` profile a route has no limiter and no breaker at all).
 * What does not depend on the recipe (whether the path writes, takes a proof,
 * is refused in plan mode) is worked out once per path.
 *
 * @since 0.2.0
 */
import type { Limit } from "@ugent/wrappers"
import { matches } from "../Path.ts"
import type * as Profile from "../Profile.ts"
import * as Recipe from "../Recipe.ts"
import { annotationsOf, type Entry, type RegistryShape } from "../Registry.ts"
import * as Modes from "../self/Modes.ts"

/**
 * What a path is, whoever calls it.
 *
 * @category models
 * @since 0.2.0
 */
export interface Target {
  readonly path: string
  readonly entry: Entry
  /** Whether its input has a `proof` that a session may supply. */
  readonly takesProof: boolean
  /** Whether it writes and its input has a `dryRun`: the change it would make can be shown before it is approved. */
  readonly previews: boolean
  /** A call that writes files or runs a shell is progress for the loop detector. */
  readonly progress: boolean
  /** Whether its audit entry before the call is stored before it runs (it has side effects). */
  readonly sideEffects: boolean
  readonly refusedInPlanMode: boolean
  /** Whether its calls may run beside other such calls (see {@link runsBeside}). */
  readonly readOnly: boolean
}

/**
 * A path as one caller's recipe and settings serve it.
 *
 * @category models
 * @since 0.2.0
 */
export interface Route extends Target {
  /** The recipe's decision at the path's lowest level (a level that depends on the input is decided again). */
  readonly decision: Recipe.Decision
  /** The rate limits of its calls; all empty: no limiter stage. */
  readonly limits: {
    readonly global: ReadonlyArray<Limit>
    readonly observer: ReadonlyArray<Limit>
    readonly tool: ReadonlyArray<Limit>
  }
  /** Whether a circuit breaker guards it. */
  readonly breaker: boolean
  readonly timeoutMillis: number
  readonly budgetTokens: number
  /** Whether the recipe or host set the budget (else a client's own limit applies, where one is known). */
  readonly budgetFixed: boolean
  readonly loop: Profile.LoopSettings | undefined
}

/**
 * What a path is, from its registry entry.
 *
 * @category constructors
 * @since 0.2.0
 */
export const target = (registry: RegistryShape, entry: Entry): Target => {
  const { effects } = entry.tool
  const input = registry.describeEntry(entry).input as { readonly properties?: Record<string, unknown> }
  return {
    path: entry.path,
    entry,
    // A mounted tool never gets the session's proof: its server sees only what the caller sent.
    takesProof: entry.foreign === undefined && input.properties?.proof !== undefined,
    previews: effects.writesFs && input.properties?.dryRun !== undefined,
    progress: effects.writesFs || effects.callsShell,
    sideEffects: effects.writesFs || effects.callsShell || effects.callsNetwork || effects.irreversible,
    // A mounted tool calls another server: plan mode lets it run only when that server marks it read-only.
    refusedInPlanMode: entry.foreign !== undefined ? !entry.foreign.readOnly : Modes.refusedInPlanMode(entry.tool),
    readOnly: runsBeside(entry)
  }
}

/**
 * Whether a path's calls may run beside other such calls, in any order: it
 * changes nothing (read-only) and reads the world (files, the network,
 * another server's read-only tool), so two of them give the same results
 * in either order on an unchanged workspace. Tools that change only the
 * caller's own state (its tasks, its mode) or ask its person run in order.
 *
 * @category predicates
 * @since 0.2.0
 */
export const runsBeside = (entry: Entry): boolean =>
  annotationsOf(entry).readOnly && (entry.tool.effects.readsFs || entry.tool.effects.callsNetwork)

/**
 * A path as a recipe and its settings serve it.
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (
  target: Target,
  recipe: Recipe.Recipe,
  settings: Profile.Settings,
  options: { readonly breaker: boolean }
): Route => {
  const tool = settings.tool.find(([pattern]) => matches(pattern, target.path))?.[1] ?? []
  return {
    ...target,
    decision: Recipe.decide(recipe, target.path, target.entry.level?.min ?? target.entry.tool.trust),
    limits: { global: settings.global, observer: settings.caller, tool },
    breaker: options.breaker,
    timeoutMillis: settings.timeoutMillis,
    budgetTokens: settings.budgetTokens,
    budgetFixed: settings.budgetFixed,
    loop: settings.loop
  }
}

/**
 * Whether a route's calls pass a limiter (some limit applies).
 *
 * @category predicates
 * @since 0.2.0
 */
export const isLimited = (route: Route): boolean =>
  route.limits.global.length > 0 || route.limits.observer.length > 0 || route.limits.tool.length > 0
