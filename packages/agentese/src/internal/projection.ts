/**
 * What the MCP and Toolkit projections share: tool names for a path, the
 * caller's context captured where a projection is built, and object-root
 * input schemas.
 *
 * @internal
 */
import type { Observer } from "@ugent/core"
import { Context, Effect, type JsonSchema, Option, Scope } from "effect"
import type * as Invoke from "../Invoke.ts"
import { fromProviderName, isPath, toProviderName } from "../Path.ts"
import type * as Recipe from "../Recipe.ts"

/** The services a projection needs: the road and the caller it serves. */
export type Services = Invoke.Invoker | Observer.Observer | Recipe.CurrentRecipe

const providerSafe = /^[a-zA-Z0-9_-]{1,64}$/

/** The provider-safe name of a path, if it fits `^[a-zA-Z0-9_-]{1,64}$`. */
export const safeName = (path: string): Option.Option<string> => {
  const name = toProviderName(path)
  return providerSafe.test(name) ? Option.some(name) : Option.none()
}

/** The path a tool name stands for: a dotted path itself, or a provider-safe name mapped back. */
export const pathOfName = (name: string): Option.Option<string> =>
  isPath(name) ? Option.some(name) : fromProviderName(name)

/**
 * The context of the place a projection is built, without its scope: calls
 * run with it under their own request context, so the approver, the proof
 * key and the caller configured for the server reach the road.
 */
export const capture: Effect.Effect<Context.Context<never>> = Effect.map(Effect.context<never>(), (context) =>
  Context.omit(Scope.Scope)(context)
)

/** Runs an effect with the captured context under the current one (the current one wins on shared keys). */
export const within =
  (captured: Context.Context<never>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Services>> =>
    Effect.updateContext(
      effect,
      // The captured context was taken where `Services` were provided (the projections' constructors require them).
      (current: Context.Context<Exclude<R, Services>>) => Context.merge(captured, current) as Context.Context<R>
    )

/**
 * How a path's input travels in an object: MCP tool inputs and provider
 * function parameters must be object-root schemas. An object input is sent
 * as is; any other (a string, an array, anything) is wrapped as `{ input }`.
 */
export interface InputShape {
  readonly schema: { readonly type: "object" } & JsonSchema.JsonSchema
  readonly unwrap: (args: unknown) => unknown
}

const asIs = (args: unknown) => args

/** The object-root shape of an input JSON Schema. */
export const inputShape = (schema: JsonSchema.JsonSchema): InputShape => {
  const s = schema as { readonly type?: unknown; readonly not?: unknown }
  if (s.type === "object") return { schema: schema as InputShape["schema"], unwrap: asIs }
  // An empty struct has no "type": its JSON Schema only excludes null.
  const not = s.not as { readonly type?: unknown } | undefined
  if (Object.keys(s).length === 1 && not?.type === "null") {
    return { schema: { type: "object", properties: {} }, unwrap: asIs }
  }
  return {
    schema: { type: "object", properties: { input: schema }, required: ["input"] },
    unwrap: (args) => (isRecord(args) ? args.input : args)
  }
}

/** Whether a value is a JSON object (not an array, not null). */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
