/**
 * A `Tool<A, B, E, R>` is a typed Effect morphism: it takes an `A`, produces a
 * `B`, fails with typed errors `E` and needs the services `R`. It carries the
 * schemas that decode its input and encode its output and failures at every
 * protocol boundary, a trust level, and the effects it declares.
 *
 * Tools compose (Kleisli composition over `Effect`) with {@link andThen} and
 * {@link pipeline}, where a mismatch between one step's output and the next
 * step's input is a compile error at that step. Composition is normalized:
 * identities are absorbed and nested compositions flatten, so the category
 * laws also hold structurally and long pipelines stay flat.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { dual } from "effect/Function"
import type * as Inspectable from "effect/Inspectable"
import type * as Pipeable from "effect/Pipeable"
import type { Contravariant, Covariant } from "effect/Types"
import type { CapabilityOf, TrustLevel } from "./internal/level.ts"
import * as internal from "./internal/tool.ts"
import { type AllFailed, AllFailedSchema, allFailed } from "./ToolError.ts"

/**
 * @category type IDs
 * @since 0.1.0
 */
export const TypeId: "~ugent/Tool" = internal.TypeId

/**
 * @category type IDs
 * @since 0.1.0
 */
export type TypeId = typeof TypeId

/**
 * A schema a tool may hold: any codec that needs no services to decode or
 * encode. The constructors tie its decoded type to the tool's `A`, `B` or `E`.
 *
 * @category models
 * @since 0.1.0
 */
export type AnySchema = internal.AnySchema

/**
 * What a tool declares it does: reads or writes the file system, calls a
 * shell, calls the network; whether it is irreversible (always asks for
 * approval) and idempotent.
 *
 * @category models
 * @since 0.1.0
 */
export type Effects = internal.Effects

/**
 * The effects of a pure computation: none, idempotent.
 *
 * @category constants
 * @since 0.1.0
 */
export const noEffects: Effects = internal.noEffects

/**
 * A typed, composable tool.
 *
 * @category models
 * @since 0.1.0
 */
export interface Tool<in A, out B, out E = never, out R = never> extends Pipeable.Pipeable, Inspectable.Inspectable {
  readonly [TypeId]: {
    readonly _A: Contravariant<A>
    readonly _B: Covariant<B>
    readonly _E: Covariant<E>
    readonly _R: Covariant<R>
  }
  /** `"file.read"`; a composition is named by its steps: `"grep >> read"`. */
  readonly name: string
  readonly description: string
  /** Part of the cache key of `Cached`: bump it when the tool's behaviour changes. */
  readonly version: string
  /** Decodes an `A` from JSON at a boundary. */
  readonly input: AnySchema
  /** Encodes a `B` to JSON at a boundary. */
  readonly output: AnySchema
  /** Encodes an `E` to JSON at a boundary. */
  readonly failure: AnySchema
  /** The runtime mirror of the trust capability in `R`. */
  readonly trust: TrustLevel
  readonly effects: Effects
  readonly run: (a: A) => Effect.Effect<B, E, R>
}

/**
 * Any tool, whatever its types. Use it as a constraint, not as a value type.
 *
 * @category models
 * @since 0.1.0
 */
// biome-ignore lint/suspicious/noExplicitAny: the top of a type with an input in contravariant position
export type Any = Tool<any, unknown, unknown, unknown>

/**
 * @category type-level
 * @since 0.1.0
 */
export type Input<T> = T extends Tool<infer A, infer _B, infer _E, infer _R> ? A : never
/**
 * @category type-level
 * @since 0.1.0
 */
export type Output<T> = T extends Tool<infer _A, infer B, infer _E, infer _R> ? B : never
/**
 * @category type-level
 * @since 0.1.0
 */
export type Failure<T> = T extends Tool<infer _A, infer _B, infer E, infer _R> ? E : never
/**
 * @category type-level
 * @since 0.1.0
 */
export type Requirements<T> = T extends Tool<infer _A, infer _B, infer _E, infer R> ? R : never

// The engine works on an erased view; these two casts are the only bridge, and
// they are sound because every public constructor types its result from the
// same schemas and `run` it stores.
const fromImpl = <A, B, E, R>(impl: internal.ToolImpl): Tool<A, B, E, R> => impl as unknown as Tool<A, B, E, R>
const toImpl = (tool: Tool<never, unknown, unknown, unknown>): internal.ToolImpl => tool as unknown as internal.ToolImpl

/**
 * Whether a value is a `Tool`.
 *
 * @category guards
 * @since 0.1.0
 */
export const isTool = (u: unknown): u is Tool<never, unknown, unknown, unknown> => internal.isTool(u)

/**
 * Creates a tool from its schemas and a `run` function. The tool requires the
 * capability of its trust level (`Trust.L0` … `Trust.L3`, default L0) in `R`:
 * run it through `Trust.gate`, or provide `Trust.grant(level)`.
 *
 * **Example** (A read-only tool)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const wordCount = Tool.make({
 *   name: "text.words",
 *   description: "Counts the words of a text.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   output: Schema.Struct({ words: Schema.Number }),
 *   run: ({ text }) => Effect.succeed({ words: text.split(/\s+/).filter((w) => w !== "").length })
 * })
 * const n = Effect.runSync(wordCount.run({ text: "a b c" }).pipe(Effect.provide(Trust.grant(0))))
 * console.log(n)
 * // => { words: 3 }
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <
  I extends AnySchema,
  O extends AnySchema,
  R = never,
  F extends AnySchema = typeof Schema.Never,
  const L extends TrustLevel = 0
>(options: {
  readonly name: string
  readonly description: string
  readonly version?: string | undefined
  readonly input: I
  readonly output: O
  readonly failure?: F | undefined
  readonly trust?: L | undefined
  readonly effects?: Partial<Effects> | undefined
  readonly run: (a: I["Type"]) => Effect.Effect<O["Type"], F["Type"], R>
}): Tool<I["Type"], O["Type"], F["Type"], R | CapabilityOf<L>> => {
  const trust: TrustLevel = options.trust ?? 0
  const effects: Effects = { ...internal.noEffects, ...options.effects }
  if (trust === 0 && (effects.writesFs || effects.callsShell || effects.irreversible)) {
    throw new Error(
      `Tool.make(${options.name}): a tool that writes, calls a shell or is irreversible cannot be L0 (read-only); give it trust 1 or more.`
    )
  }
  return fromImpl(
    internal.makePrimitive({
      name: options.name,
      description: options.description,
      version: options.version,
      input: options.input,
      output: options.output,
      failure: options.failure ?? Schema.Never,
      trust,
      effects,
      run: internal.requireCapability(trust, options.run as (a: unknown) => Effect.Effect<unknown, unknown, unknown>),
      unchecked: options.run as (a: unknown) => Effect.Effect<unknown, unknown, unknown>
    })
  )
}

/**
 * A pure step: a total function lifted to a tool. It needs no capability and
 * declares no effects. Adjacent pure steps of a pipeline are fused into one
 * function call. A function that throws is a defect, not a typed failure.
 *
 * **Example** (A pure step)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const double = Tool.fromFunction({ name: "double", input: Schema.Number, output: Schema.Number, f: (n: number) => n * 2 })
 * console.log(Effect.runSync(double.run(21)))
 * // => 42
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromFunction = <A, B>(options: {
  readonly name: string
  readonly description?: string | undefined
  readonly input?: Schema.Codec<A, unknown, never, never> | undefined
  readonly output?: Schema.Codec<B, unknown, never, never> | undefined
  readonly f: (a: A) => B
}): Tool<A, B> =>
  fromImpl(
    internal.makePure({
      name: options.name,
      description: options.description ?? `Computes ${options.name} of its input.`,
      input: options.input ?? Schema.Unknown,
      output: options.output ?? Schema.Unknown,
      f: options.f as (a: unknown) => unknown
    })
  )

/**
 * The identity tool on a schema. Composition absorbs it: `andThen(identity(s), f)`
 * is `f` itself.
 *
 * **Example** (Identity is absorbed)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", f: (n: number) => n + 1 })
 * console.log(Tool.andThen(Tool.identity(Schema.Number), inc) === inc)
 * // => true
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const identity = <A>(schema: Schema.Codec<A, unknown, never, never>): Tool<A, A> =>
  fromImpl(internal.makeIdentity(schema))

/**
 * Sequential composition: runs `self`, then `that` on its output. Dual.
 *
 * **Example** (Composing two steps)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", f: (n: number) => n + 1 })
 * const show = Tool.fromFunction({ name: "show", f: (n: number) => `n=${n}` })
 * const both = inc.pipe(Tool.andThen(show))
 * console.log(both.name, Effect.runSync(both.run(1)))
 * // => inc >> show n=2
 * ```
 *
 * @category composition
 * @since 0.1.0
 */
export const andThen: {
  <B, C, E2, R2>(that: Tool<B, C, E2, R2>): <A, E, R>(self: Tool<A, B, E, R>) => Tool<A, C, E | E2, R | R2>
  <A, B, E, R, C, E2, R2>(self: Tool<A, B, E, R>, that: Tool<B, C, E2, R2>): Tool<A, C, E | E2, R | R2>
} = dual(
  2,
  <A, B, E, R, C, E2, R2>(self: Tool<A, B, E, R>, that: Tool<B, C, E2, R2>): Tool<A, C, E | E2, R | R2> =>
    fromImpl(internal.andThen(toImpl(self), toImpl(that)))
)

type PipelineFailure<Ts> = Ts extends ReadonlyArray<infer T> ? Failure<T> : never
type PipelineRequirements<Ts> = Ts extends ReadonlyArray<infer T> ? Requirements<T> : never
type Last<Ts> = Ts extends readonly [...infer _, infer L] ? L : Ts extends ReadonlyArray<infer T> ? T : never

/**
 * The expected type of each step of a pipeline: a tool whose input accepts the
 * previous step's output. A step that does not fit is reported at its own
 * position, with the type it should have had.
 *
 * @category type-level
 * @since 0.1.0
 */
export type Chain<Ts extends ReadonlyArray<unknown>, Prev> = Ts extends readonly []
  ? readonly []
  : Ts extends readonly [infer H, ...infer Rest]
    ? readonly [Tool<Prev, Output<H>, Failure<H>, Requirements<H>>, ...Chain<Rest, Output<H>>]
    : Ts extends ReadonlyArray<infer T>
      ? // A spread array of steps: each must accept the previous output, so they are endomorphisms.
        ReadonlyArray<Tool<Prev & Output<T>, Output<T>, Failure<T>, Requirements<T>>>
      : never

/**
 * The type a pipeline's argument list must have: the first step as given, each
 * next step accepting the previous one's output.
 *
 * @category type-level
 * @since 0.1.0
 */
export type ValidPipeline<Ts extends ReadonlyArray<unknown>> = Ts extends readonly [infer H, ...infer Rest]
  ? readonly [H, ...Chain<Rest, Output<H>>]
  : never

/**
 * Composes a list of tools left to right. Every step is checked against the
 * next at compile time; the result is named by its steps joined with ` >> `.
 *
 * **Example** (A three-step pipeline)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const words = Tool.fromFunction({ name: "words", f: (s: string) => s.split(" ") })
 * const count = Tool.fromFunction({ name: "count", f: (ws: ReadonlyArray<string>) => ws.length })
 * const even = Tool.fromFunction({ name: "even", f: (n: number) => n % 2 === 0 })
 * const p = Tool.pipeline(words, count, even)
 * console.log(p.name, Effect.runSync(p.run("a b c d")))
 * // => words >> count >> even true
 * ```
 *
 * @category composition
 * @since 0.1.0
 */
export const pipeline = <const Ts extends readonly [Any, ...ReadonlyArray<Any>]>(
  ...steps: Ts & ValidPipeline<Ts>
): Tool<Input<Ts[0]>, Output<Last<Ts>>, PipelineFailure<Ts>, PipelineRequirements<Ts>> =>
  fromImpl(internal.composeAll((steps as ReadonlyArray<Any>).map(toImpl)))

/**
 * The steps of a tool after normalization: one step for a primitive tool, the
 * flattened, identity-free list for a composition.
 *
 * @category getters
 * @since 0.1.0
 */
export const steps = (self: Any): ReadonlyArray<Any> => internal.flatten(toImpl(self)).map((s) => fromImpl(s))

// ---------------------------------------------------------------------------
// Arrow combinators
// ---------------------------------------------------------------------------

/**
 * Transforms the output with a pure function (`self >> arr(f)`). Dual.
 *
 * **Example** (Mapping the output)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const len = Tool.fromFunction({ name: "len", f: (s: string) => s.length })
 * console.log(Effect.runSync(len.pipe(Tool.map((n) => n * 10)).run("abc")))
 * // => 30
 * ```
 *
 * @category arrows
 * @since 0.1.0
 */
export const map: {
  <B, C>(
    f: (b: B) => C,
    output?: Schema.Codec<C, unknown, never, never>
  ): <A, E, R>(self: Tool<A, B, E, R>) => Tool<A, C, E, R>
  <A, B, E, R, C>(
    self: Tool<A, B, E, R>,
    f: (b: B) => C,
    output?: Schema.Codec<C, unknown, never, never>
  ): Tool<A, C, E, R>
} = dual(
  (args) => isTool(args[0]),
  <A, B, E, R, C>(self: Tool<A, B, E, R>, f: (b: B) => C, output?: Schema.Codec<C, unknown, never, never>) =>
    andThen(self, fromFunction({ name: "map", input: undefined, output, f }))
)

/**
 * Transforms the input with a pure function before running (`arr(f) >> self`). Dual.
 *
 * @category arrows
 * @since 0.1.0
 */
export const contramap: {
  <A0, A>(
    f: (a: A0) => A,
    input?: Schema.Codec<A0, unknown, never, never>
  ): <B, E, R>(self: Tool<A, B, E, R>) => Tool<A0, B, E, R>
  <A, B, E, R, A0>(
    self: Tool<A, B, E, R>,
    f: (a: A0) => A,
    input?: Schema.Codec<A0, unknown, never, never>
  ): Tool<A0, B, E, R>
} = dual(
  (args) => isTool(args[0]),
  <A, B, E, R, A0>(self: Tool<A, B, E, R>, f: (a: A0) => A, input?: Schema.Codec<A0, unknown, never, never>) =>
    andThen(fromFunction({ name: "contramap", input, f }), self)
)

const pairSchema = (a: AnySchema, b: AnySchema): AnySchema => Schema.Tuple([a, b])

/**
 * Runs `self` on the first component of a pair and passes the second through.
 *
 * @category arrows
 * @since 0.1.0
 */
export const first = <A, B, E, R, C = unknown>(
  self: Tool<A, B, E, R>
): Tool<readonly [A, C], readonly [B, C], E, R> => {
  const impl = toImpl(self)
  return fromImpl(
    internal.derive(impl, {
      name: `first(${impl.name})`,
      description: `Runs ${impl.name} on the first component of a pair.`,
      input: pairSchema(impl.input, Schema.Unknown),
      output: pairSchema(impl.output, Schema.Unknown),
      run: (pair) => {
        const [a, c] = pair as readonly [unknown, unknown]
        return Effect.map(impl.run(a), (b) => [b, c] as const)
      }
    })
  )
}

/**
 * Runs `self` on the second component of a pair and passes the first through.
 *
 * @category arrows
 * @since 0.1.0
 */
export const second = <A, B, E, R, C = unknown>(
  self: Tool<A, B, E, R>
): Tool<readonly [C, A], readonly [C, B], E, R> => {
  const impl = toImpl(self)
  return fromImpl(
    internal.derive(impl, {
      name: `second(${impl.name})`,
      description: `Runs ${impl.name} on the second component of a pair.`,
      input: pairSchema(Schema.Unknown, impl.input),
      output: pairSchema(Schema.Unknown, impl.output),
      run: (pair) => {
        const [c, a] = pair as readonly [unknown, unknown]
        return Effect.map(impl.run(a), (b) => [c, b] as const)
      }
    })
  )
}

const combined = (
  name: string,
  description: string,
  tools: ReadonlyArray<internal.ToolImpl>,
  input: AnySchema,
  output: AnySchema,
  failure: AnySchema,
  run: (a: unknown) => Effect.Effect<unknown, unknown, unknown>
): internal.ToolImpl =>
  internal.makePrimitive({
    name,
    description,
    input,
    output,
    failure,
    trust: Math.max(0, ...tools.map((t) => t.trust)) as TrustLevel,
    effects: tools.reduce((m, t) => internal.mergeEffects(m, t.effects), internal.noEffects),
    run
  })

/**
 * `f *** g`: runs `f` on the first and `g` on the second component of a pair,
 * `f` first. A failure of `f` skips `g`. Dual.
 *
 * **Example** (Two tools side by side)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", f: (n: number) => n + 1 })
 * const up = Tool.fromFunction({ name: "up", f: (s: string) => s.toUpperCase() })
 * console.log(Effect.runSync(Tool.split(inc, up).run([1, "a"])))
 * // => [ 2, 'A' ]
 * ```
 *
 * @category arrows
 * @since 0.1.0
 */
export const split: {
  <C, D, E2, R2>(
    that: Tool<C, D, E2, R2>
  ): <A, B, E, R>(self: Tool<A, B, E, R>) => Tool<readonly [A, C], readonly [B, D], E | E2, R | R2>
  <A, B, E, R, C, D, E2, R2>(
    self: Tool<A, B, E, R>,
    that: Tool<C, D, E2, R2>
  ): Tool<readonly [A, C], readonly [B, D], E | E2, R | R2>
} = dual(2, <A, B, E, R, C, D, E2, R2>(self: Tool<A, B, E, R>, that: Tool<C, D, E2, R2>) => {
  const f = toImpl(self)
  const g = toImpl(that)
  return fromImpl<readonly [A, C], readonly [B, D], E | E2, R | R2>(
    combined(
      `(${f.name} *** ${g.name})`,
      `Runs ${f.name} and ${g.name} on the two components of a pair.`,
      [f, g],
      pairSchema(f.input, g.input),
      pairSchema(f.output, g.output),
      internal.failureUnion([f.failure, g.failure]),
      (pair) => {
        const [a, c] = pair as readonly [unknown, unknown]
        return Effect.flatMap(f.run(a), (b) => Effect.map(g.run(c), (d) => [b, d] as const))
      }
    )
  )
})

/**
 * `f &&& g`: runs both tools on the same input, `f` first, and pairs their
 * outputs. Dual.
 *
 * @category arrows
 * @since 0.1.0
 */
export const fanout: {
  <A, C, E2, R2>(
    that: Tool<A, C, E2, R2>
  ): <B, E, R>(self: Tool<A, B, E, R>) => Tool<A, readonly [B, C], E | E2, R | R2>
  <A, B, E, R, C, E2, R2>(self: Tool<A, B, E, R>, that: Tool<A, C, E2, R2>): Tool<A, readonly [B, C], E | E2, R | R2>
} = dual(2, <A, B, E, R, C, E2, R2>(self: Tool<A, B, E, R>, that: Tool<A, C, E2, R2>) => {
  const f = toImpl(self)
  const g = toImpl(that)
  return fromImpl<A, readonly [B, C], E | E2, R | R2>(
    combined(
      `(${f.name} &&& ${g.name})`,
      `Runs ${f.name} and ${g.name} on the same input and pairs their outputs.`,
      [f, g],
      f.input,
      pairSchema(f.output, g.output),
      internal.failureUnion([f.failure, g.failure]),
      (a) => Effect.flatMap(f.run(a), (b) => Effect.map(g.run(a), (c) => [b, c] as const))
    )
  )
})

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never

/**
 * The options of {@link all}.
 *
 * @category models
 * @since 0.1.0
 */
export interface AllOptions {
  /** `"collect-all"` (default) runs every branch and reports all failures together; `"fail-fast"` stops at the first. */
  readonly mode?: "fail-fast" | "collect-all" | undefined
  /** How many branches run at once; `"unbounded"` by default. */
  readonly concurrency?: number | "unbounded" | undefined
}

type Members<T> = T extends ReadonlyArray<infer X> ? X : T[keyof T]
type AllInput<T> = UnionToIntersection<Input<Members<T>>>
type AllOutput<T> = { -readonly [K in keyof T]: Output<T[K]> }
type AllFailure<T, O> = O extends { readonly mode: "fail-fast" }
  ? Failure<Members<T>>
  : [Failure<Members<T>>] extends [never]
    ? never
    : AllFailed<Failure<Members<T>>>

const mergedInput = (inputs: ReadonlyArray<AnySchema>): AnySchema => {
  const first = inputs[0] ?? Schema.Unknown
  if (inputs.every((s) => s === first)) return first
  // Struct inputs are merged field by field; anything else keeps the first branch's input.
  const fieldsOf = (s: AnySchema): Record<string, AnySchema> | undefined =>
    s.ast._tag === "Objects" && "fields" in s ? (s.fields as Record<string, AnySchema>) : undefined
  const all = inputs.map(fieldsOf)
  if (all.some((f) => f === undefined)) return first
  return Schema.Struct(Object.assign({}, ...all) as Record<string, AnySchema>)
}

/**
 * Runs a struct or tuple of tools on the same input, concurrently by default,
 * and collects their outputs in the same shape. In `"collect-all"` mode (the
 * default) every branch runs and all failures are reported together as one
 * `AllFailed`; in `"fail-fast"` mode the first failure interrupts the rest.
 *
 * **Example** (Collecting two results)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const len = Tool.fromFunction({ name: "len", f: (s: string) => s.length })
 * const up = Tool.fromFunction({ name: "up", f: (s: string) => s.toUpperCase() })
 * console.log(Effect.runSync(Tool.all({ len, up }).run("abc")))
 * // => { len: 3, up: 'ABC' }
 * ```
 *
 * @category arrows
 * @since 0.1.0
 */
export const all = <
  const T extends Readonly<Record<string, Any>> | readonly [Any, ...ReadonlyArray<Any>],
  const O extends AllOptions = { readonly mode: "collect-all" }
>(
  tools: T,
  options?: O
): Tool<AllInput<T>, AllOutput<T>, AllFailure<T, O>, Requirements<Members<T>>> => {
  const isTuple = Array.isArray(tools)
  const entries: ReadonlyArray<readonly [string, internal.ToolImpl]> = Object.entries(tools).map(([k, t]) => [
    k,
    toImpl(t as Any)
  ])
  const impls = entries.map(([, t]) => t)
  const mode = options?.mode ?? "collect-all"
  const concurrency = options?.concurrency ?? "unbounded"
  const memberFailure = internal.failureUnion(impls.map((t) => t.failure))
  const failure =
    mode === "fail-fast" || memberFailure === Schema.Never ? memberFailure : AllFailedSchema(memberFailure)
  const output = isTuple
    ? Schema.Tuple(impls.map((t) => t.output))
    : Schema.Struct(Object.fromEntries(entries.map(([k, t]) => [k, t.output])))
  const shape = (values: ReadonlyArray<unknown>): unknown =>
    isTuple ? values : Object.fromEntries(entries.map(([k], i) => [k, values[i]]))
  const run = (a: unknown): Effect.Effect<unknown, unknown, unknown> =>
    mode === "fail-fast"
      ? Effect.map(
          Effect.forEach(impls, (t) => t.run(a), { concurrency }),
          (values) => shape(values)
        )
      : Effect.flatMap(
          Effect.forEach(impls, (t) => Effect.result(t.run(a)), { concurrency }),
          (results) => {
            const failures: Array<{ key: string; error: unknown }> = []
            const values: Array<unknown> = []
            results.forEach((r, i) => {
              if (r._tag === "Failure") failures.push({ key: entries[i]![0], error: r.failure })
              else values.push(r.success)
            })
            return failures.length > 0 ? Effect.fail(allFailed(failures)) : Effect.succeed(shape(values))
          }
        )
  return fromImpl(
    combined(
      `all(${entries.map(([k, t]) => (isTuple ? t.name : `${k}: ${t.name}`)).join(", ")})`,
      `Runs ${impls.map((t) => t.name).join(", ")} on the same input and collects their outputs.`,
      impls,
      mergedInput(impls.map((t) => t.input)),
      output,
      failure,
      run
    )
  )
}

/**
 * Falls back to `that` (on the same input) when `self` fails. The result fails
 * only with `that`'s errors: `self`'s are handled. Dual.
 *
 * **Example** (A fallback)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * class Miss extends Schema.TaggedError<Miss>()("Miss", {}) {}
 * const cache = Tool.make({ name: "cache", description: "A cache that misses.", input: Schema.String, output: Schema.String, failure: Miss, run: () => Effect.fail(new Miss()) })
 * const origin = Tool.fromFunction({ name: "origin", f: (k: string) => `value of ${k}` })
 * console.log(Effect.runSync(Tool.orElse(cache, origin).run("k").pipe(Effect.provide(Trust.grant(0)))))
 * // => value of k
 * ```
 *
 * @category arrows
 * @since 0.1.0
 */
export const orElse: {
  <A, C, E2, R2>(that: Tool<A, C, E2, R2>): <B, E, R>(self: Tool<A, B, E, R>) => Tool<A, B | C, E2, R | R2>
  <A, B, E, R, C, E2, R2>(self: Tool<A, B, E, R>, that: Tool<A, C, E2, R2>): Tool<A, B | C, E2, R | R2>
} = dual(2, <A, B, E, R, C, E2, R2>(self: Tool<A, B, E, R>, that: Tool<A, C, E2, R2>) => {
  const f = toImpl(self)
  const g = toImpl(that)
  return fromImpl<A, B | C, E2, R | R2>(
    combined(
      `(${f.name} | ${g.name})`,
      `Runs ${f.name}; if it fails, runs ${g.name} on the same input.`,
      [f, g],
      f.input,
      f.output === g.output ? f.output : Schema.Union([f.output, g.output]),
      g.failure,
      (a) => Effect.catch(f.run(a), () => g.run(a))
    )
  )
})

type ChoiceInput<T> = { [K in keyof T]: Input<T[K]> extends { readonly _tag: K } ? Input<T[K]> : never }[keyof T]

/**
 * Dispatches on a tagged-union input: each member `{ _tag: K, … }` goes to the
 * tool registered under `K`.
 *
 * **Example** (Two branches)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const area = Tool.choice({
 *   Square: Tool.fromFunction({ name: "square", f: (s: { readonly _tag: "Square"; readonly side: number }) => s.side ** 2 }),
 *   Rect: Tool.fromFunction({ name: "rect", f: (r: { readonly _tag: "Rect"; readonly w: number; readonly h: number }) => r.w * r.h })
 * })
 * console.log(Effect.runSync(area.run({ _tag: "Rect", w: 2, h: 3 })))
 * // => 6
 * ```
 *
 * @category arrows
 * @since 0.1.0
 */
export const choice = <const T extends Readonly<Record<string, Any>>>(
  tools: T
): Tool<ChoiceInput<T>, Output<T[keyof T]>, Failure<T[keyof T]>, Requirements<T[keyof T]>> => {
  const branches = new Map<string, internal.ToolImpl>(Object.entries(tools).map(([k, t]) => [k, toImpl(t)]))
  const impls = [...branches.values()]
  const union = (schemas: ReadonlyArray<AnySchema>): AnySchema =>
    schemas.every((s) => s === schemas[0]) ? schemas[0]! : Schema.Union(schemas)
  return fromImpl(
    combined(
      `choice(${[...branches].map(([k, t]) => `${k}: ${t.name}`).join(", ")})`,
      `Dispatches on the input's _tag: ${[...branches.keys()].join(", ")}.`,
      impls,
      union(impls.map((t) => t.input)),
      union(impls.map((t) => t.output)),
      internal.failureUnion(impls.map((t) => t.failure)),
      (a) => {
        const tag = (a as { readonly _tag: string })._tag
        const branch = branches.get(tag)
        // The input type admits only registered tags; an unknown tag is a bug of the caller's cast.
        return branch === undefined ? Effect.die(new Error(`Tool.choice: no branch for _tag ${tag}`)) : branch.run(a)
      }
    )
  )
}

// ---------------------------------------------------------------------------
// Deriving tools (for wrappers)
// ---------------------------------------------------------------------------

/**
 * Replaces a tool's `run` with a function of the old one, keeping its name,
 * schemas, trust and effects unless overridden. Wrappers are built with it.
 * The result is a single opaque step.
 *
 * **Example** (A wrapper that logs)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Effect } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", f: (n: number) => n + 1 })
 * const logged = Tool.wrap(inc, (run) => (n) => Effect.tap(run(n), (out) => Effect.sync(() => console.log(`inc(${n}) = ${out}`))))
 * Effect.runSync(logged.run(1))
 * // => inc(1) = 2
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const wrap = <A, B, E, R, B2 = B, E2 = E, R2 = R>(
  self: Tool<A, B, E, R>,
  f: (run: (a: A) => Effect.Effect<B, E, R>) => (a: A) => Effect.Effect<B2, E2, R2>,
  overrides?: {
    readonly name?: string | undefined
    readonly description?: string | undefined
    readonly version?: string | undefined
    readonly output?: AnySchema | undefined
    readonly failure?: AnySchema | undefined
    readonly trust?: TrustLevel | undefined
    readonly effects?: Partial<Effects> | undefined
  }
): Tool<A, B2, E2, R2> => {
  const impl = toImpl(self)
  const run = f(self.run) as (a: unknown) => Effect.Effect<unknown, unknown, unknown>
  return fromImpl(
    internal.derive(impl, {
      run,
      ...(overrides?.name !== undefined ? { name: overrides.name } : {}),
      ...(overrides?.description !== undefined ? { description: overrides.description } : {}),
      ...(overrides?.version !== undefined ? { version: overrides.version } : {}),
      ...(overrides?.output !== undefined ? { output: overrides.output } : {}),
      ...(overrides?.failure !== undefined ? { failure: overrides.failure } : {}),
      ...(overrides?.trust !== undefined ? { trust: overrides.trust } : {}),
      ...(overrides?.effects !== undefined ? { effects: { ...impl.effects, ...overrides.effects } } : {})
    })
  )
}

/**
 * Renames a tool (its steps are unchanged). Dual.
 *
 * @category combinators
 * @since 0.1.0
 */
export const withName: {
  (name: string, description?: string): <A, B, E, R>(self: Tool<A, B, E, R>) => Tool<A, B, E, R>
  <A, B, E, R>(self: Tool<A, B, E, R>, name: string, description?: string): Tool<A, B, E, R>
} = dual(
  (args) => isTool(args[0]),
  <A, B, E, R>(self: Tool<A, B, E, R>, name: string, description?: string): Tool<A, B, E, R> =>
    wrap(self, (run) => run, { name, description })
)

/**
 * The failure schema of a tool as the union of some extra error schemas with
 * its own, for wrappers that add errors.
 *
 * @category utils
 * @since 0.1.0
 */
export const failureWith = (self: Any, ...extra: ReadonlyArray<AnySchema>): AnySchema =>
  internal.failureUnion([toImpl(self).failure, ...extra])
