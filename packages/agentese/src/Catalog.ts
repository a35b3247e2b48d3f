/**
 * The `Catalog` is what every projection shows of the road: the paths a
 * caller is offered (by the same check `invoke` enforces, so offer and
 * permission never drift), their one-line summaries and full descriptions,
 * the names a path goes by (its dotted form and its provider-safe form,
 * `world_tools_file_read`), and the object-root input schemas that MCP and
 * model providers need. The CLI, the HTTP API, the MCP server and the
 * `effect/ai` Toolkit all take their listings from here.
 *
 * @since 0.2.0
 */
import { Boundary, Observer, ToolError, type Trust } from "@ugent/core"
import { Effect, type JsonSchema, Option, Schema } from "effect"
import * as Budget from "./Budget.ts"
import { fromProviderName, isPath, toProviderName } from "./Path.ts"
import * as Recipe from "./Recipe.ts"

const ObserverService = Observer.Observer
import { computedOnRead, type Description, type Entry, type RegistryShape } from "./Registry.ts"

// ---------------------------------------------------------------------------
// Offers
// ---------------------------------------------------------------------------

/**
 * A path as offered to a caller: its description and, under the caller's
 * recipe, the level a call needs and whether each call is approved.
 *
 * @category models
 * @since 0.1.0
 */
export interface Offer extends Description {
  /** The level a call needs: the tool's own, maybe raised by the recipe. */
  readonly requiredTrust: Trust.TrustLevel
  readonly requiresApproval: boolean
}

/**
 * The level and approval a projection shows for a path: an offer's (under
 * the caller's recipe), or a bare description's own level.
 *
 * @category offers
 * @since 0.2.0
 */
export const levelOf = (
  d: Description | Offer
): { readonly requiredTrust: Trust.TrustLevel; readonly requiresApproval: boolean } =>
  "requiredTrust" in d
    ? { requiredTrust: d.requiredTrust, requiresApproval: d.requiresApproval }
    : { requiredTrust: d.toolTrust, requiresApproval: false }

/**
 * Whether an observer may use an entry under a recipe: the recipe allows the
 * path and the observer's level reaches the (possibly raised) required level.
 * Approval does not hide a path: it is asked for when the call is made.
 *
 * @category policy
 * @since 0.2.0
 */
export const permits = (entry: Entry, observer: Observer.ObserverShape, recipe: Recipe.Recipe): boolean => {
  const decision = Recipe.decide(recipe, entry.path, baseLevel(entry))
  return decision._tag === "Allowed" && observer.trust >= decision.requiredTrust
}

/**
 * The lowest level a path can need: the tool's own, or for a level that
 * depends on the input, its minimum (a shell allowed at L1 for some
 * commands is listed at L1).
 *
 * @category policy
 * @since 0.2.0
 */
export const baseLevel = (entry: Entry): Trust.TrustLevel => entry.level?.min ?? entry.tool.trust

/**
 * The offer of an entry under a recipe.
 *
 * @category offers
 * @since 0.2.0
 */
export const offerOf = (registry: RegistryShape, entry: Entry, recipe: Recipe.Recipe): Offer => {
  const decision = Recipe.decide(recipe, entry.path, baseLevel(entry))
  const d = registry.describeEntry(entry)
  // Output and failure schemas stay computed on their first read (see Registry.describeEntry).
  return computedOnRead(
    {
      path: d.path,
      name: d.name,
      description: d.description,
      toolTrust: d.toolTrust,
      effects: d.effects,
      annotations: d.annotations,
      input: d.input,
      ...(d.mount === undefined ? {} : { mount: d.mount }),
      requiredTrust: decision._tag === "Allowed" ? decision.requiredTrust : baseLevel(entry),
      requiresApproval: decision._tag === "Allowed" && decision.approval
    },
    { output: () => d.output, failure: () => d.failure }
  )
}

/**
 * The offers of a caller, in path order.
 *
 * @category offers
 * @since 0.2.0
 */
export const offers = (
  registry: RegistryShape,
  observer: Observer.ObserverShape,
  recipe: Recipe.Recipe
): ReadonlyArray<Offer> =>
  registry.entries.filter((e) => permits(e, observer, recipe)).map((e) => offerOf(registry, e, recipe))

// ---------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------

const providerSafe = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * The provider-safe name of a path, if it fits `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * @category names
 * @since 0.2.0
 */
export const safeName = (path: string): Option.Option<string> => {
  const name = toProviderName(path)
  return providerSafe.test(name) ? Option.some(name) : Option.none()
}

/**
 * The name a path is listed under: its provider-safe form
 * (`world_tools_file_read`), or the dotted path itself when that form would
 * exceed 64 characters. LLM APIs and strict MCP hosts accept only
 * `^[a-zA-Z0-9_-]{1,64}$`, and a host passes tool names straight to a model.
 *
 * **Example** (Names)
 * ```ts
 * import { Catalog } from "@ugent/agentese"
 * console.log(Catalog.toolName("world.tools.file.read"))
 * // => world_tools_file_read
 * ```
 *
 * @category names
 * @since 0.2.0
 */
export const toolName = (path: string): string => Option.getOrElse(safeName(path), () => path)

/**
 * The path a name stands for: a dotted path itself, or a provider-safe name
 * mapped back.
 *
 * **Example** (Both names call one path)
 * ```ts
 * import { Catalog } from "@ugent/agentese"
 * import { Option } from "effect"
 * console.log(Option.getOrNull(Catalog.pathOf("world_tools_file_read")), Option.getOrNull(Catalog.pathOf(" world.tools.file.read ")))
 * // => world.tools.file.read world.tools.file.read
 * ```
 *
 * @category names
 * @since 0.2.0
 */
export const pathOf = (name: string): Option.Option<string> => {
  const trimmed = name.trim()
  if (isPath(trimmed)) return Option.some(trimmed)
  return /^[a-z][a-z0-9-]*(_[a-z][a-z0-9-]*)+$/.test(trimmed) ? fromProviderName(trimmed) : Option.none()
}

// ---------------------------------------------------------------------------
// Input and output shapes
// ---------------------------------------------------------------------------

/**
 * How a path's input travels in an object: MCP tool inputs and provider
 * function parameters must be object-root schemas. An object input is sent
 * as is; any other (a string, an array) is wrapped as `{ input }`.
 *
 * @category shapes
 * @since 0.2.0
 */
export interface InputShape {
  readonly schema: { readonly type: "object" } & JsonSchema.JsonSchema
  readonly unwrap: (args: unknown) => unknown
}

const asIs = (args: unknown) => args

/**
 * Whether a value is a JSON object (not an array, not null).
 *
 * @category shapes
 * @since 0.2.0
 */
export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The object-root shape of an input JSON Schema.
 *
 * @category shapes
 * @since 0.2.0
 */
export const inputShape = (schema: JsonSchema.JsonSchema): InputShape => {
  const s = schema as { readonly type?: unknown; readonly not?: unknown }
  if (s.type === "object") return { schema: schema as InputShape["schema"], unwrap: asIs }
  // An empty struct has no "type": its JSON Schema only excludes null.
  const not = s.not as { readonly type?: unknown } | undefined
  // Both shapes are closed, as the road refuses keys a tool does not take.
  if (Object.keys(s).length === 1 && not?.type === "null") {
    return { schema: { type: "object", properties: {}, additionalProperties: false }, unwrap: asIs }
  }
  return {
    schema: { type: "object", properties: { input: schema }, required: ["input"], additionalProperties: false },
    unwrap: (args) => (isRecord(args) ? args.input : args)
  }
}

const overBudgetSchema = Boundary.jsonSchema(Budget.OverBudget)

/**
 * The schema of what a served call returns: the tool's output, or, when the
 * result is over the caller's budget, an {@link Budget.OverBudget}. An
 * object output stays an object-root schema (MCP declares only those).
 *
 * @category shapes
 * @since 0.2.0
 */
export const servedOutput = (output: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  const o = output as { readonly type?: unknown }
  return o.type === "object"
    ? { type: "object", anyOf: [output, overBudgetSchema] }
    : { anyOf: [output, overBudgetSchema] }
}

// ---------------------------------------------------------------------------
// Listings, as every projection prints them
// ---------------------------------------------------------------------------

const Level = Schema.Literals([0, 1, 2, 3])

const Annotations = Schema.Struct({
  readOnly: Schema.Boolean,
  destructive: Schema.Boolean,
  idempotent: Schema.Boolean,
  openWorld: Schema.Boolean
})

/**
 * One offered path in a listing.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Summary = Schema.Struct({
  path: Schema.String,
  providerName: Schema.String.annotate({ description: "The provider-safe name (world_tools_file_read)." }),
  description: Schema.String,
  requiredTrust: Level.annotate({
    description: "The level a call needs under the caller's recipe (the tool's own, maybe raised)."
  }),
  requiresApproval: Schema.Boolean,
  annotations: Annotations
}).annotate({ identifier: "PathSummary" })

/**
 * @category models
 * @since 0.1.0
 */
export type Summary = typeof Summary.Type

/**
 * The listing: who the caller is and what it may use.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Listing = Schema.Struct({
  observer: Schema.Struct({ id: Schema.String, trust: Level }),
  paths: Schema.Array(Summary)
}).annotate({ identifier: "Listing" })

/**
 * @category models
 * @since 0.1.0
 */
export type Listing = typeof Listing.Type

/**
 * A path described: its schemas, level and effects.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Described = Schema.Struct({
  ...Summary.fields,
  name: Schema.String,
  toolTrust: Level.annotate({ description: "The tool's own level." }),
  effects: Schema.Record(Schema.String, Schema.Boolean),
  input: Schema.Unknown.annotate({ description: "JSON Schema of the input." }),
  output: Schema.Unknown.annotate({
    description: "JSON Schema of the output (or, for a result over the budget, an OverBudget)."
  }),
  failure: Schema.Unknown.annotate({ description: "JSON Schema of the failures." })
}).annotate({ identifier: "Description" })

/**
 * @category models
 * @since 0.1.0
 */
export type Described = typeof Described.Type

/**
 * The summary of an offer, as listings print it.
 *
 * @category shapes
 * @since 0.1.0
 */
export const summarize = (offer: Offer): Summary => ({
  path: offer.path,
  providerName: toProviderName(offer.path),
  description: offer.description,
  requiredTrust: offer.requiredTrust,
  requiresApproval: offer.requiresApproval,
  annotations: offer.annotations
})

/**
 * The full description of an offer.
 *
 * @category shapes
 * @since 0.1.0
 */
export const describeOffer = (offer: Offer): Described => ({
  ...summarize(offer),
  name: offer.name,
  toolTrust: offer.toolTrust,
  effects: offer.effects,
  input: offer.input,
  output: servedOutput(offer.output),
  failure: offer.failure
})

/**
 * What a listing and a description read of the road: the caller's offers
 * (`Invoke.InvokerShape` has both; named here so the catalog does not import
 * the road that imports it).
 *
 * @category shapes
 * @since 0.2.0
 */
export interface Offering {
  readonly list: Effect.Effect<ReadonlyArray<Offer>, never, Observer.Observer | Recipe.CurrentRecipe>
  readonly describe: (path: string) => Effect.Effect<Offer, unknown, Observer.Observer | Recipe.CurrentRecipe>
}

/**
 * A description that failed: the error's JSON and kind, as the road's `FailureOutcome` gives them.
 *
 * @category shapes
 * @since 0.2.0
 */
export interface Undescribed {
  readonly ok: false
  readonly error: ToolError.FailureJson
  readonly kind: ToolError.Kind
  readonly path: string
  readonly callId: string
}

/**
 * The caller's listing from a road: who it is and the paths it may use.
 *
 * @category shapes
 * @since 0.1.0
 */
export const listing = (road: Offering): Effect.Effect<Listing, never, Observer.Observer | Recipe.CurrentRecipe> =>
  Effect.gen(function* () {
    const observer = yield* ObserverService
    const offered = yield* road.list
    return { observer: { id: observer.id, trust: observer.trust }, paths: offered.map(summarize) }
  })

/**
 * Describes a path or a provider-safe name for the caller; a hidden or
 * unknown path is an `UnknownPath` failure outcome.
 *
 * @category shapes
 * @since 0.1.0
 */
export const describe = (
  road: Offering,
  name: string
): Effect.Effect<
  { readonly ok: true; readonly description: Described } | Undescribed,
  never,
  Observer.Observer | Recipe.CurrentRecipe
> => {
  const path = Option.getOrElse(pathOf(name), () => name)
  return road.describe(path).pipe(
    Effect.map((offer) => ({ ok: true as const, description: describeOffer(offer) })),
    Effect.catch((error) =>
      Effect.succeed({
        ok: false as const,
        error: ToolError.toJson(error),
        kind: ToolError.kindOf(error),
        path,
        callId: ""
      })
    )
  )
}
