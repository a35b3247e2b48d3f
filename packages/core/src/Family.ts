/**
 * A `Family` is a group of tools served together under one path prefix
 * (`world.tools` + `file.read` = `world.tools.file.read`), with the layer
 * that builds the services its tools need. A tool folder exports its family;
 * a server registers it with one line. Building a family closes every tool
 * over its services, so what a server holds needs nothing but the caller's
 * trust capabilities. A family may decide at build time which tools it offers
 * (a shell tool is not offered where no sandbox exists).
 *
 * @since 0.2.0
 */
import { Context, Effect, Layer, Predicate, type Scope } from "effect"
import type { TrustLevel } from "./internal/level.ts"
import type * as Trust from "./Trust.ts"
import * as Tool from "./Tool.ts"

/**
 * Marks a value built by {@link make} or {@link effect}: a string, so a
 * family made with another copy of this package is recognised too.
 *
 * @category type IDs
 * @since 0.2.0
 */
export const TypeId: "~ugent/Family" = "~ugent/Family"

/**
 * @category type IDs
 * @since 0.2.0
 */
export type TypeId = typeof TypeId

/**
 * A tool closed over its services: it needs only trust capabilities.
 *
 * @category models
 * @since 0.2.0
 */
export type Closed = Tool.Tool<unknown, unknown, unknown, Trust.Capability>

/**
 * How a result is told in a sentence when it is too large to return whole:
 * `Read 120 lines from src/a.ts`, `Found 47 matches in 12 files`, and how to
 * get the rest with the tool's own paging (`call again with offset 121`).
 *
 * @category models
 * @since 0.2.0
 */
export interface Presentation {
  readonly summary: string
  /** How to get the next part with the tool itself, if it pages. */
  readonly next?: string | undefined
}

/**
 * A level that depends on the input: a shell allowed at L1 for a list of
 * plain commands and at L3 for anything else. `min` is the lowest it can be
 * (what a listing shows); `of` is the level a decoded input needs, never
 * below `min`. A host gates the call at `of(input)` and, having checked it,
 * runs the tool with the capability the tool's own level asks for.
 *
 * @category models
 * @since 0.2.0
 */
export interface Level {
  readonly min: TrustLevel
  readonly of: (input: unknown) => TrustLevel
}

/**
 * What a tool served from another server (an MCP server mounted by a host)
 * declares of itself: its name there, its input JSON Schema (listed as it
 * is: the tool's own input schema only accepts JSON, and the other server
 * validates), and its hints. A read-only one is a read: plan mode lets it
 * run, and it may run beside other reads.
 *
 * @category models
 * @since 0.2.0
 */
export interface Foreign {
  /** The server it comes from, as the host names it (`fs` of `--mount fs=…`). */
  readonly server: string
  /** The tool's own name on that server (`read_file`). */
  readonly name: string
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
}

/**
 * A built tool of a family, with how its results are told and, if it
 * depends on the input, its level.
 *
 * @category models
 * @since 0.2.0
 */
export interface Member {
  readonly tool: Closed
  readonly present?: ((output: unknown, input: unknown) => Presentation) | undefined
  readonly level?: Level | undefined
  /**
   * For a tool that enforces its own time limit (a shell command's
   * `timeoutSeconds`): the longest a call with this input may take, in
   * milliseconds, so a host's shorter limit does not cut it first.
   */
  readonly timeout?: ((input: unknown) => number | undefined) | undefined
  /** For a tool of another server: what it declares of itself (see {@link Foreign}). */
  readonly foreign?: Foreign | undefined
}

/**
 * A family: its name, its path prefix, and how to build its tools. `R` is
 * what the host must provide (a workspace, stores); `E` is how building can
 * fail.
 *
 * @category models
 * @since 0.2.0
 */
export interface Family<out R = never, out E = never> {
  readonly [TypeId]: TypeId
  /** A short name, for messages and listings (`"file"`, `"system"`). */
  readonly name: string
  /** The path prefix of every tool of the family (`"world.tools"`, `"self.tools"`). */
  readonly prefix: string
  /** Builds the family's tools, keyed by their name under the prefix, closed over their services. */
  readonly build: Effect.Effect<Readonly<Record<string, Member>>, E, R | Scope.Scope>
}

/**
 * Any family.
 *
 * @category models
 * @since 0.2.0
 */
// biome-ignore lint/suspicious/noExplicitAny: a family of any requirement, as the registry holds them.
export type Any = Family<any, any>

/**
 * Whether a value is a family (built by {@link make} or {@link effect}), as
 * a host checks what a module it loads exports.
 *
 * **Example** (A family, and a look-alike)
 * ```ts
 * import { Family, Tool } from "@ugent/core"
 * const upper = Tool.fromFunction({ name: "text.upper", f: (s: string) => s.toUpperCase() })
 * console.log(Family.isFamily(Family.make({ name: "text", prefix: "world.tools", tools: { "text.upper": upper } })))
 * // => true
 * console.log(Family.isFamily({ name: "text", prefix: "world.tools", tools: { "text.upper": upper } }))
 * // => false
 * ```
 *
 * @category guards
 * @since 0.2.0
 */
export const isFamily = (u: unknown): u is Any =>
  Predicate.hasProperty(u, TypeId) &&
  u[TypeId] === TypeId &&
  Predicate.hasProperty(u, "build") &&
  Effect.isEffect(u.build) &&
  Predicate.hasProperty(u, "name") &&
  typeof u.name === "string" &&
  Predicate.hasProperty(u, "prefix") &&
  typeof u.prefix === "string"

/**
 * What a family needs from its host.
 *
 * @category models
 * @since 0.2.0
 */
export type Requirements<F> = F extends Family<infer R, infer _E> ? R : never

/**
 * How building a family can fail.
 *
 * @category models
 * @since 0.2.0
 */
export type Failure<F> = F extends Family<infer _R, infer E> ? E : never

/**
 * Closes a tool over a context: the tool runs with the captured services,
 * under the call's own context (which wins on shared keys).
 *
 * @category constructors
 * @since 0.2.0
 */
export const close = (tool: Tool.Any, captured: Context.Context<never>): Closed =>
  Tool.wrap(
    tool,
    (run) => (a) =>
      Effect.updateContext(
        run(a),
        // The captured context holds every service the tool needs but the capabilities, which the call brings;
        // the record erased each tool's own R, so the merged context is typed as the erased R.
        (outer: Context.Context<Trust.Capability>) => Context.merge(captured, outer) as Context.Context<unknown>
      )
  ) as Closed

type ServicesOf<T extends Readonly<Record<string, Tool.Any>>> = Exclude<Tool.Requirements<T[keyof T]>, Trust.Capability>

/**
 * How each tool of a record tells its results, typed by the tool's own input
 * and output.
 *
 * @category models
 * @since 0.2.0
 */
export type Presenters<T extends Readonly<Record<string, Tool.Any>>> = {
  readonly [K in keyof T]?: (output: Tool.Output<T[K]>, input: Tool.Input<T[K]>) => Presentation
}

/**
 * Input-dependent levels of a record's tools, typed by each tool's input.
 *
 * @category models
 * @since 0.2.0
 */
export type Levels<T extends Readonly<Record<string, Tool.Any>>> = {
  readonly [K in keyof T]?: { readonly min: TrustLevel; readonly of: (input: Tool.Input<T[K]>) => TrustLevel }
}

/**
 * The time limits tools set themselves, typed by each tool's input (see
 * {@link Member}).
 *
 * @category models
 * @since 0.2.0
 */
export type Timeouts<T extends Readonly<Record<string, Tool.Any>>> = {
  readonly [K in keyof T]?: (input: Tool.Input<T[K]>) => number | undefined
}

/**
 * A family of a fixed record of tools, with an optional layer for their
 * services. The host provides what the layer needs and what the tools need
 * beyond the layer.
 *
 * **Example** (A family of one tool)
 * ```ts
 * import { Family, Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const upper = Tool.fromFunction({ name: "text.upper", f: (s: string) => s.toUpperCase() })
 * const text = Family.make({ name: "text", prefix: "world.tools", tools: { "text.upper": upper } })
 * const members = Effect.runSync(Effect.scoped(text.build))
 * console.log(Object.keys(members))
 * // => [ 'text.upper' ]
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = <
  const T extends Readonly<Record<string, Tool.Any>>,
  ROut = never,
  E = never,
  RIn = never
>(options: {
  readonly name: string
  readonly prefix: string
  readonly tools: T
  readonly layer?: Layer.Layer<ROut, E, RIn> | undefined
  readonly present?: Presenters<T> | undefined
  readonly levels?: Levels<T> | undefined
}): Family<RIn | Exclude<ServicesOf<T>, ROut>, E> =>
  effect({
    name: options.name,
    prefix: options.prefix,
    tools: Effect.succeed(options.tools),
    ...(options.layer !== undefined ? { layer: options.layer } : {}),
    ...(options.present !== undefined ? { present: options.present } : {}),
    ...(options.levels !== undefined ? { levels: Effect.succeed(options.levels) } : {})
  }) as Family<RIn | Exclude<ServicesOf<T>, ROut>, E>

/**
 * A family whose tools are chosen when it is built (a tool that cannot work
 * on this machine is left out, so it is never offered). Building runs in a
 * scope that lasts as long as the family, so `tools` may acquire resources
 * for the family's life (a `Scope` is not a requirement of the family).
 *
 * @category constructors
 * @since 0.2.0
 */
export const effect = <
  const T extends Readonly<Record<string, Tool.Any>>,
  E1 = never,
  R1 = never,
  ROut = never,
  E = never,
  RIn = never
>(options: {
  readonly name: string
  readonly prefix: string
  readonly tools: Effect.Effect<T, E1, R1>
  readonly layer?: Layer.Layer<ROut, E, RIn> | undefined
  readonly present?: Presenters<T> | undefined
  /** Input-dependent levels, chosen when the family is built. */
  readonly levels?: Effect.Effect<Levels<T>, never, R1> | undefined
  /** The time limits tools set themselves. */
  readonly timeouts?: Timeouts<T> | undefined
}): Family<RIn | Exclude<Exclude<R1, Scope.Scope> | ServicesOf<T>, ROut>, E | E1> => ({
  [TypeId]: TypeId,
  name: options.name,
  prefix: options.prefix,
  build: Effect.gen(function* () {
    const host = yield* Effect.context<never>()
    const own = options.layer === undefined ? Context.empty() : yield* Layer.build(options.layer)
    const captured = Context.merge(host, own as Context.Context<never>)
    const tools = yield* Effect.provide(options.tools, captured as Context.Context<R1>)
    const members: Record<string, Member> = {}
    const present = (options.present ?? {}) as Readonly<
      Record<string, ((output: unknown, input: unknown) => Presentation) | undefined>
    >
    const levels = (
      options.levels === undefined ? {} : yield* Effect.provide(options.levels, captured as Context.Context<R1>)
    ) as Readonly<Record<string, Level | undefined>>
    const timeouts = (options.timeouts ?? {}) as Readonly<
      Record<string, ((input: unknown) => number | undefined) | undefined>
    >
    for (const [name, tool] of Object.entries(tools)) {
      members[name] = {
        tool: close(tool, captured),
        present: present[name],
        level: levels[name],
        timeout: timeouts[name]
      }
    }
    return members
  }) as Effect.Effect<
    Readonly<Record<string, Member>>,
    E | E1,
    RIn | Exclude<Exclude<R1, Scope.Scope> | ServicesOf<T>, ROut> | Scope.Scope
  >
})
