/**
 * The `Registry` holds every registered path: the tools of the families a
 * server was given, each under its family's prefix
 * (`world.tools` + `file.read`). It resolves a path to its tool (suggesting
 * near paths for an unknown one) and describes a path: its input, output and
 * error JSON Schemas, trust level, declared effects and protocol annotations.
 * Which paths a caller is offered is the `Catalog`'s concern.
 *
 * @since 0.1.0
 */
import { Boundary, type Family, type ToolError } from "@ugent/core"
import type { JsonSchema, Scope } from "effect"
import { Context, Effect, Layer, Schema } from "effect"
import { isPath } from "./Path.ts"

/**
 * A registered tool: its path, its family and how its results are told.
 *
 * @category models
 * @since 0.1.0
 */
export interface Entry {
  readonly path: string
  /** The family it belongs to. */
  readonly family: string
  readonly tool: Family.Closed
  readonly present?: ((output: unknown, input: unknown) => Family.Presentation) | undefined
  /** A level that depends on the input (see `Family.Level`); without it, the tool's own. */
  readonly level?: Family.Level | undefined
  /** The time limit the tool sets itself for an input, if any. */
  readonly timeout?: ((input: unknown) => number | undefined) | undefined
  /** For a tool of a mounted server: its name, schema and hints there (see `Family.Foreign`). */
  readonly foreign?: Family.Foreign | undefined
}

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
 * Families that cannot be served together, found when the server starts:
 * two families with one name, two tools at one path, or a path that is not
 * well-formed.
 *
 * @category errors
 * @since 0.2.0
 */
export class FamilyConflict extends Schema.TaggedError<FamilyConflict>()("FamilyConflict", {
  reason: Schema.Literals(["path", "name", "malformed"]),
  /** The path (or, for `name`, the name) in question. */
  subject: Schema.String,
  /** The families involved: two for a clash, one for a malformed path. */
  families: Schema.Array(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const [first = "", second = first] = this.families
    if (this.reason === "path") {
      return `The families ${first} and ${second} both register ${this.subject}, and a path has one tool: give one family's tools other names, or the family another prefix.`
    }
    if (this.reason === "name") {
      return `Two families are named ${this.subject}, and a name tells a family's tools apart in listings and records: give one of them another name.`
    }
    return `The family ${first} registers ${this.subject}, which is not a path (lowercase words joined by dots, such as self.tools.notes.add): give its prefix or tool another name.`
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
  /** The tool's own level (a recipe may raise it for a caller: see the Catalog's `requiredTrust`). */
  readonly toolTrust: 0 | 1 | 2 | 3
  readonly effects: Readonly<Record<string, boolean>>
  readonly annotations: Annotations
  readonly input: JsonSchema.JsonSchema
  readonly output: JsonSchema.JsonSchema
  readonly failure: JsonSchema.JsonSchema
  /** For a tool of a mounted MCP server: the mount's name and the tool's own name there. */
  readonly mount?: { readonly server: string; readonly tool: string } | undefined
}

/**
 * @category models
 * @since 0.1.0
 */
export interface RegistryShape {
  /** Every entry, in path order. */
  readonly entries: ReadonlyArray<Entry>
  readonly resolve: (path: string) => Effect.Effect<Entry, UnknownPath>
  /** The entry at a path, if any. */
  readonly get: (path: string) => Entry | undefined
  /** The error for a path that is not registered, with the nearest paths as suggestions. */
  readonly unknown: (path: string) => UnknownPath
  readonly describe: (path: string) => Effect.Effect<Description, UnknownPath>
  readonly describeEntry: (entry: Entry) => Description
}

/**
 * @category services
 * @since 0.1.0
 */
export class Registry extends Context.Service<Registry, RegistryShape>()("ugent/agentese/Registry") {}

/**
 * The annotations a tool's trust and effects imply: read-only for L0 tools
 * that change nothing (and so may be called again); a write is destructive;
 * local tools are not open-world.
 * A mounted tool's are its own server's hints.
 *
 * @category describing
 * @since 0.1.0
 */
export const annotationsOf = (entry: Entry): Annotations => {
  const foreign = entry.foreign
  if (foreign !== undefined) {
    return {
      readOnly: foreign.readOnly,
      destructive: !foreign.readOnly && foreign.destructive,
      idempotent: foreign.idempotent,
      openWorld: foreign.openWorld
    }
  }
  const { effects, trust } = entry.tool
  // A tool that changes nothing can be called again to the same effect: one that says it cannot (a sub-agent) is no read.
  const readOnly =
    trust === 0 && !effects.writesFs && !effects.callsShell && !effects.irreversible && effects.idempotent
  return {
    readOnly,
    destructive: !readOnly && (effects.writesFs || effects.callsShell || effects.irreversible),
    idempotent: effects.idempotent,
    openWorld: effects.callsNetwork
  }
}

/**
 * Adds enumerable properties computed on their first read (and kept):
 * a listing needs every input schema, but output and failure schemas,
 * most of the work, only when a projection shows them. A spread or
 * `JSON.stringify` reads them as plain values.
 *
 * @internal
 */
export const computedOnRead = <A extends object, B extends Record<string, unknown>>(
  base: A,
  fields: { readonly [K in keyof B]: () => B[K] }
): A & B => {
  for (const key of Object.keys(fields) as Array<keyof B & string>) {
    let value: B[typeof key] | undefined
    let computed = false
    Object.defineProperty(base, key, {
      enumerable: true,
      get: () => {
        if (!computed) {
          value = fields[key]()
          computed = true
        }
        return value
      }
    })
  }
  return base as A & B
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
 * Builds a registry from entries. Two tools on one path is a configuration
 * bug.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (all: ReadonlyArray<Entry>): RegistryShape => {
  const byPath = new Map<string, Entry>()
  for (const entry of all) {
    if (!isPath(entry.path)) throw new Error(`Registry: "${entry.path}" is not a well-formed path`)
    if (byPath.has(entry.path)) throw new Error(`Registry: two tools registered at ${entry.path}`)
    byPath.set(entry.path, entry)
  }
  const entries = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const descriptions = new Map<string, Description>()
  const describeEntry = (entry: Entry): Description => {
    const cached = descriptions.get(entry.path)
    if (cached !== undefined) return cached
    const description = computedOnRead(
      {
        path: entry.path,
        name: entry.tool.name,
        description: entry.tool.description,
        toolTrust: entry.tool.trust,
        effects: { ...entry.tool.effects },
        annotations: annotationsOf(entry),
        // A mounted tool is listed with its own server's schema, unchanged: that server validates its input.
        input: entry.foreign?.inputSchema ?? Boundary.jsonSchema(entry.tool.input, { onExcessProperty: "error" }),
        ...(entry.foreign === undefined ? {} : { mount: { server: entry.foreign.server, tool: entry.foreign.name } })
      },
      { output: () => Boundary.jsonSchema(entry.tool.output), failure: () => Boundary.jsonSchema(entry.tool.failure) }
    )
    descriptions.set(entry.path, description)
    return description
  }
  const unknown = (path: string) => {
    // A tool's own name (`file.read`) or the tail of a path names the path that ends with it, first.
    const tail = `.${path.replace(/_/g, ".")}`
    const ending = entries.filter((e) => path !== "" && e.path.endsWith(tail)).map((e) => e.path)
    const near = entries
      .map((e) => [e.path, distance(e.path, path)] as const)
      .filter(([p, d]) => d <= Math.max(3, Math.floor(path.length / 4)) && !ending.includes(p))
      .sort((a, b) => a[1] - b[1])
      .map(([p]) => p)
    return new UnknownPath({ path, suggestions: [...ending, ...near].slice(0, 3) })
  }
  const resolve = (path: string) => {
    const entry = byPath.get(path)
    return entry !== undefined ? Effect.succeed(entry) : Effect.fail(unknown(path))
  }
  return {
    entries,
    resolve,
    unknown,
    get: (path) => byPath.get(path),
    describe: (path) => Effect.map(resolve(path), describeEntry),
    describeEntry
  }
}

/**
 * The entries of built families.
 *
 * @category constructors
 * @since 0.2.0
 */
export const entriesOf = (
  built: ReadonlyArray<{ readonly family: Family.Any; readonly members: Readonly<Record<string, Family.Member>> }>
): ReadonlyArray<Entry> =>
  built.flatMap(({ family, members }) =>
    Object.entries(members).map(([name, member]) => ({
      path: `${family.prefix}.${name}`,
      family: family.name,
      tool: member.tool,
      present: member.present,
      level: member.level,
      timeout: member.timeout,
      foreign: member.foreign
    }))
  )

/**
 * The first conflict among built families, if any (see {@link FamilyConflict}).
 *
 * @category constructors
 * @since 0.2.0
 */
export const conflictOf = (
  built: ReadonlyArray<{ readonly family: Family.Any; readonly members: Readonly<Record<string, Family.Member>> }>
): FamilyConflict | undefined => {
  const names = new Set<string>()
  for (const { family } of built) {
    if (names.has(family.name))
      return new FamilyConflict({ reason: "name", subject: family.name, families: [family.name, family.name] })
    names.add(family.name)
  }
  const byPath = new Map<string, string>()
  for (const entry of entriesOf(built)) {
    if (!isPath(entry.path))
      return new FamilyConflict({ reason: "malformed", subject: entry.path, families: [entry.family] })
    const first = byPath.get(entry.path)
    if (first !== undefined)
      return new FamilyConflict({ reason: "path", subject: entry.path, families: [first, entry.family] })
    byPath.set(entry.path, entry.family)
  }
  return undefined
}

/**
 * Builds every family in the layer's scope (their services live as long as
 * the registry) and registers their tools; families that cannot be served
 * together fail with {@link FamilyConflict}.
 *
 * **Example** (A registry of one family)
 * ```ts
 * import { Registry } from "@ugent/agentese"
 * import { Family, Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const upper = Tool.fromFunction({ name: "text.upper", f: (s: string) => s.toUpperCase() })
 * const text = Family.make({ name: "text", prefix: "world.tools", tools: { "text.upper": upper } })
 * const paths = Effect.runSync(Effect.scoped(Effect.map(Registry.build([text]), (r) => r.entries.map((e) => e.path))))
 * console.log(paths)
 * // => [ 'world.tools.text.upper' ]
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const build = <const F extends ReadonlyArray<Family.Any>>(
  families: F
): Effect.Effect<
  RegistryShape,
  Family.Failure<F[number]> | FamilyConflict,
  Family.Requirements<F[number]> | Scope.Scope
> =>
  Effect.flatMap(
    // Families are built side by side: their start-up probes (a sandbox, a git binary) overlap.
    Effect.forEach(families, (family) => Effect.map(family.build, (members) => ({ family, members })), {
      concurrency: "unbounded"
    }),
    (built) => {
      const conflict = conflictOf(built)
      return conflict === undefined ? Effect.succeed(make(entriesOf(built))) : Effect.fail(conflict)
    }
  ) as Effect.Effect<
    RegistryShape,
    Family.Failure<F[number]> | FamilyConflict,
    Family.Requirements<F[number]> | Scope.Scope
  >

/**
 * A layer building the registry from families.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = <const F extends ReadonlyArray<Family.Any>>(
  families: F
): Layer.Layer<Registry, Family.Failure<F[number]> | FamilyConflict, Family.Requirements<F[number]>> =>
  Layer.effect(Registry, Effect.map(build(families), Registry.of))
