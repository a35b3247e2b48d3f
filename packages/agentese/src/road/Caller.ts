/**
 * A `Caller` is who calls, made once per connection (a CLI run, an MCP
 * client, an HTTP token, an agent loop) and passed to every call as an
 * argument: the `Observer` (its id and trust level, from the server's
 * configuration, never from a request), its `Recipe`, the settings in force,
 * its session, the key of its mode, and the context its calls run with (the
 * capabilities of a level, made ahead for each level they may run at).
 *
 * @since 0.2.0
 */
import { Observer, Trust } from "@ugent/core"
import { Read } from "@ugent/tools"
import { Context } from "effect"
import type * as Profile from "../Profile.ts"
import * as Recipe from "../Recipe.ts"
import * as Sessions from "../Sessions.ts"

/**
 * @category models
 * @since 0.2.0
 */
export interface Caller {
  readonly observer: Observer.ObserverShape
  readonly recipe: Recipe.Recipe
  readonly settings: Profile.Settings
  /** The session its writes find their proofs in, when the projection keeps state. */
  readonly session: string | undefined
  /** The key of its plan mode: its session, else itself. */
  readonly modeKey: string
  /** The forbidden rules in force for it. */
  readonly forbidden: ReadonlyArray<Trust.ForbiddenRule>
  /** The context a call runs with at a level: the capabilities, the caller, its session; made once per level. */
  readonly runContext: (level: Trust.TrustLevel) => Context.Context<never>
}

/**
 * A caller, with the context each of its calls will run with (`base`: the
 * road's own services, which the tools may read).
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (options: {
  readonly observer: Observer.ObserverShape
  readonly recipe: Recipe.Recipe
  readonly settings: Profile.Settings
  readonly session: string | undefined
  readonly forbidden: ReadonlyArray<Trust.ForbiddenRule>
  readonly base: Context.Context<never>
}): Caller => {
  const { observer, session } = options
  // The caller's per-read budget (its recipe's or profile's maxLines) over the host's other read limits.
  const { maxLines } = options.settings
  const base =
    maxLines === undefined
      ? options.base
      : Context.add(options.base, Read.Limits, { ...Context.get(options.base, Read.Limits), lines: maxLines })
  const contexts: Array<Context.Context<never> | undefined> = [undefined, undefined, undefined, undefined]
  return {
    observer,
    recipe: options.recipe,
    settings: options.settings,
    session,
    modeKey: session === undefined ? `caller:${observer.id}` : `session:${observer.id}:${session}`,
    forbidden: options.forbidden,
    runContext: (level) => {
      let made = contexts[level]
      if (made === undefined) {
        const runner = level === observer.trust ? observer : { ...observer, trust: level }
        made = Context.merge(
          base,
          // The caller and its recipe: a tool that acts for it (a sub-agent) narrows them, never widens them.
          Context.add(
            Context.add(Context.add(Trust.runContext(runner), Sessions.Current, session), Observer.Observer, observer),
            Recipe.CurrentRecipe,
            options.recipe
          ) as Context.Context<never>
        )
        contexts[level] = made
      }
      return made
    }
  }
}
