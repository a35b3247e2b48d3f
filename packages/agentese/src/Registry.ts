/**
 * The `Registry` holds every registered path. It resolves a path to its tool,
 * lists the paths a caller may use (by the same policy check `invoke`
 * enforces), and describes a path: its input, output and error JSON Schemas,
 * trust level, declared effects and protocol annotations.
 *
 * @since 0.1.0
 */
import { Boundary, type Observer, type ToolError, type Trust } from "@ugent/core"
import type { JsonSchema } from "effect"
import { Context, Effect, Layer, Schema } from "effect"
import type { Entry, Node } from "./Node.ts"
import * as Recipe from "./Recipe.ts"

/**
 * No tool is registered at the path.
 *
 * @category errors
 * @since 0.1.0
 */
export class UnknownPath extends Schema.TaggedError<UnknownPath>()("UnknownPath", {
  path: Schema.String,
  suggestions: Schema.Array(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    const hint =
      this.suggestions.length > 0
        ? ` Did you mean ${this.suggestions.join(", ")}?`
        : " List the paths (ugent list, GET /v1/paths) to see what exists."
    return `No tool at ${this.path}.${hint}`
  }
}

/**
 * The protocol hints of a path (the MCP annotations).
 *
 * @category models
 * @since 0.1.0
 */
export interface Annotations {
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
}

/**
 * What a path is, for a caller deciding whether and how to call it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Description {
  readonly path: string
  readonly name: string
  readonly description: string
  readonly trust: 0 | 1 | 2 | 3
  readonly effects: Readonly<Record<string, boolean>>
  readonly annotations: Annotations
  readonly input: JsonSchema.JsonSchema
  readonly output: JsonSchema.JsonSchema
  readonly failure: JsonSchema.JsonSchema
}

/**
 * @category models
 * @since 0.1.0
 */
export interface RegistryShape {
  readonly entries: ReadonlyArray<Entry>
  readonly resolve: (path: string) => Effect.Effect<Entry, UnknownPath>
  /** The entries an observer may use under a recipe, in path order. */
  readonly list: (observer: Observer.ObserverShape, recipe: Recipe.Recipe) => ReadonlyArray<Entry>
  readonly describe: (path: string) => Effect.Effect<Description, UnknownPath>
}

/**
 * @category services
 * @since 0.1.0
 */
export class Registry extends Context.Service<Registry, RegistryShape>()("ugent/agentese/Registry") {}

/**
 * The annotations a tool's trust and effects imply: read-only for L0 tools
 * that change nothing; a write is destructive; local tools are not open-world.
 *
 * @category describing
 * @since 0.1.0
 */
export const annotationsOf = (entry: Entry): Annotations => {
  const { effects, trust } = entry.tool
  const readOnly = trust === 0 && !effects.writesFs && !effects.callsShell && !effects.irreversible
  return {
    readOnly,
    destructive: !readOnly && (effects.writesFs || effects.callsShell || effects.irreversible),
    idempotent: effects.idempotent,
    openWorld: effects.callsNetwork
  }
}

/**
 * Whether an observer may use an entry under a recipe: the recipe allows the
 * path and the observer's level reaches the (possibly raised) required level.
 * Approval does not hide a path: it is asked for when the call is made.
 *
 * @category policy
 * @since 0.1.0
 */
export const permits = (entry: Entry, observer: Observer.ObserverShape, recipe: Recipe.Recipe): boolean => {
  const decision = Recipe.decide(recipe, entry.path, entry.tool.trust)
  return decision._tag === "Allowed" && observer.trust >= decision.requiredTrust
}

const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = tmp
    }
  }
  return row[b.length]!
}

/**
 * Builds a registry from nodes. Two tools on one path is a configuration bug.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (nodes: ReadonlyArray<Node>): RegistryShape => {
  const byPath = new Map<string, Entry>()
  for (const node of nodes) {
    for (const entry of node.entries) {
      if (byPath.has(entry.path)) throw new Error(`Registry: two tools registered at ${entry.path}`)
      byPath.set(entry.path, entry)
    }
  }
  const entries = [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path))
  const descriptions = new Map<string, Description>()
  const resolve = (path: string) => {
    const entry = byPath.get(path)
    if (entry !== undefined) return Effect.succeed(entry)
    const suggestions = entries
      .map((e) => [e.path, distance(e.path, path)] as const)
      .filter(([, d]) => d <= Math.max(3, Math.floor(path.length / 4)))
      .sort((a, b) => a[1] - b[1])
      .slice(0, 3)
      .map(([p]) => p)
    return Effect.fail(new UnknownPath({ path, suggestions }))
  }
  return {
    entries,
    resolve,
    list: (observer, recipe) => entries.filter((e) => permits(e, observer, recipe)),
    describe: (path) =>
      Effect.map(resolve(path), (entry) => {
        const cached = descriptions.get(path)
        if (cached !== undefined) return cached
        const schemas = Boundary.jsonSchemas(entry.tool)
        const description: Description = {
          path,
          name: entry.tool.name,
          description: entry.tool.description,
          trust: entry.tool.trust,
          effects: { ...entry.tool.effects },
          annotations: annotationsOf(entry),
          ...schemas
        }
        descriptions.set(path, description)
        return description
      })
  }
}

/**
 * A layer building the registry from node effects (which capture the tools'
 * services from the layer's context).
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <R>(nodes: ReadonlyArray<Effect.Effect<Node, never, R>>): Layer.Layer<Registry, never, R> =>
  Layer.effect(
    Registry,
    Effect.map(Effect.all(nodes), (built) => Registry.of(make(built)))
  )

/**
 * The trust level a path needs for a recipe (the tool's own, raised by the
 * recipe), for listings.
 *
 * @category describing
 * @since 0.1.0
 */
export const requiredTrust = (entry: Entry, recipe: Recipe.Recipe): Trust.TrustLevel => {
  const decision = Recipe.decide(recipe, entry.path, entry.tool.trust)
  return decision._tag === "Allowed" ? decision.requiredTrust : entry.tool.trust
}
