/**
 * An `Instance` is the record of operations the algebraic laws are stated
 * over: composition, identity, the arrow combinators and the tool
 * combinators. Like an instance in discipline, it is a parameter of every
 * rule set, so the same laws check ugent's own `Tool` ({@link tool}, the
 * default) and any alternative implementation (a deliberately broken one in
 * the kit's own meta-test, or a user's optimized re-implementation).
 *
 * Operations are typed over `Tool.Any`: laws run them on generated tools
 * whose types are only known at run time.
 *
 * @since 0.1.0
 */
import { Tool } from "@ugent/core"
import { Schema } from "effect"

/**
 * The options of `all` the laws use.
 *
 * @category models
 * @since 0.1.0
 */
export interface AllOptions {
  readonly mode: "fail-fast" | "collect-all"
  readonly concurrency?: number | "unbounded" | undefined
}

/**
 * The operations of an instance.
 *
 * @category models
 * @since 0.1.0
 */
export interface Instance {
  readonly name: string
  readonly identity: (schema: Tool.AnySchema) => Tool.Any
  readonly andThen: (f: Tool.Any, g: Tool.Any) => Tool.Any
  readonly pipeline: (steps: ReadonlyArray<Tool.Any>) => Tool.Any
  /** Lifts a pure function (`arr`). */
  readonly arr: (f: (a: unknown) => unknown) => Tool.Any
  readonly map: (self: Tool.Any, f: (b: unknown) => unknown) => Tool.Any
  readonly contramap: (self: Tool.Any, f: (a: unknown) => unknown) => Tool.Any
  readonly first: (self: Tool.Any) => Tool.Any
  readonly second: (self: Tool.Any) => Tool.Any
  /** `f *** g`. */
  readonly split: (f: Tool.Any, g: Tool.Any) => Tool.Any
  /** `f &&& g`. */
  readonly fanout: (f: Tool.Any, g: Tool.Any) => Tool.Any
  readonly all: (tools: Readonly<Record<string, Tool.Any>> | ReadonlyArray<Tool.Any>, options: AllOptions) => Tool.Any
  readonly orElse: (f: Tool.Any, g: Tool.Any) => Tool.Any
  readonly choice: (tools: Readonly<Record<string, Tool.Any>>) => Tool.Any
}

/**
 * ugent's own `Tool`: `arr` is `Tool.map` over the identity, every other
 * operation is the combinator of the same name.
 *
 * **Example** (Running an operation of the instance)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Instance } from "@ugent/laws"
 * import { Effect } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", f: (n: number) => n + 1 })
 * console.log(Effect.runSync(Instance.tool.first(inc).run([1, "x"])))
 * // => [ 2, 'x' ]
 * ```
 *
 * @category instances
 * @since 0.1.0
 */
export const tool: Instance = {
  name: "Tool",
  identity: (schema) => Tool.identity(schema),
  andThen: (f, g) => Tool.andThen(f, g),
  pipeline: (steps) => {
    const [head, ...rest] = steps
    if (head === undefined) throw new Error("Instance.tool.pipeline: a pipeline needs a step")
    // Every step is a Tool.Any, so each step's input accepts the previous output; the static chain check has nothing to add.
    return Tool.pipeline(...([head, ...rest] as unknown as readonly [Tool.Any]))
  },
  arr: (f) => Tool.map(Tool.identity(Schema.Unknown), f),
  map: (self, f) => Tool.map(self, f),
  contramap: (self, f) => Tool.contramap(self, f),
  first: (self) => Tool.first(self),
  second: (self) => Tool.second(self),
  split: (f, g) => Tool.split(f, g),
  fanout: (f, g) => Tool.fanout(f, g),
  all: (tools, options) =>
    Tool.all(tools as Readonly<Record<string, Tool.Any>>, {
      mode: options.mode,
      concurrency: options.concurrency
    }),
  orElse: (f, g) => Tool.orElse(f, g),
  choice: (tools) => Tool.choice(tools)
}
