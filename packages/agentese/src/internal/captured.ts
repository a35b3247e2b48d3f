/**
 * The context a projection captures where it is built (the caller, its
 * recipe, the approver, the proof key configured for the server), to run
 * each request's call with, under the request's own context.
 *
 * @internal
 */
import { Context, Effect, Scope } from "effect"
import type * as Invoke from "../Invoke.ts"

/** The context of the place a projection is built, without its scope. */
export const capture: Effect.Effect<Context.Context<never>> = Effect.map(Effect.context<never>(), (context) =>
  Context.omit(Scope.Scope)(context)
)

/** Runs an effect with the captured context under the current one (the current one wins on shared keys). */
export const within =
  (captured: Context.Context<never>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Invoke.Services>> =>
    Effect.updateContext(
      effect,
      // The captured context was taken where `Services` were provided (the projections' constructors require them).
      (current: Context.Context<Exclude<R, Invoke.Services>>) => Context.merge(captured, current) as Context.Context<R>
    )
