/**
 * The suite over ugent's own `Tool`: the category, arrow and combinator laws
 * over generated tools (pure, effectful, sleeping, failing), and over tools
 * built with each constructor (make, fromFunction, identity, wrap, pipeline),
 * including one that needs a service of its own; plus the 10,000-step
 * pipeline, equal to its fused function.
 */
import { Tool } from "@ugent/core"
import { Law, Laws, RuleSet } from "@ugent/laws"
import { Arbitrary, Context, Effect, Layer, Schema } from "effect"
import { expectTypeOf } from "vitest"

const Note = Schema.Struct({ text: Schema.String, n: Schema.Int })

// Over generated tools: this checks the Tool instance itself (andThen, pipeline, first, all, orElse, choice…).
Laws.combinators("Tool (generated tools over a struct)", { input: Note, runs: 100, testTimeout: 60_000 })
Laws.combinators("Tool (generated tools over integers)", { input: Schema.Int, runs: 100, testTimeout: 60_000 })
Laws.arrow("Tool (generated tools of trust L2)", { input: Schema.String, tools: { trust: 2 }, runs: 50 })

class Empty extends Schema.TaggedError<Empty>()("Empty", { field: Schema.String }) {
  override get message(): string {
    return `The ${this.field} is empty. Give a non-empty ${this.field}.`
  }
}

// A make tool that fails for some inputs and declares trust L1.
const shout = Tool.make({
  name: "text.shout",
  description: "Upper-cases a note; an empty note is an error.",
  input: Note,
  output: Note,
  failure: Empty,
  trust: 1,
  run: ({ text, n }) =>
    text === "" ? Effect.fail(new Empty({ field: "text" })) : Effect.succeed({ text: text.toUpperCase(), n: n + 1 })
})
Laws.combinators("Tool.make (text.shout)", { tool: shout, runs: 60, testTimeout: 60_000 })

const words = Tool.fromFunction({
  name: "text.words",
  input: Schema.String,
  output: Schema.Array(Schema.String),
  f: (s: string) => s.split(/\s+/).filter((w) => w !== "")
})
Laws.arrow("Tool.fromFunction (text.words)", { tool: words, runs: 60 })

Laws.arrow("Tool.identity", { tool: Tool.identity(Note), runs: 60 })

const counted = Tool.wrap(shout, (run) => (a) => Effect.map(run(a), (out) => ({ ...out, n: out.n * 2 })))
Laws.arrow("Tool.wrap (a wrapped make tool)", { tool: counted, runs: 60 })

const len = Tool.fromFunction({ name: "len", input: Schema.String, output: Schema.Int, f: (s: string) => s.length })
const half = Tool.fromFunction({ name: "half", input: Schema.Int, output: Schema.Int, f: (n: number) => n >> 1 })
const shoutLen = Tool.pipeline(
  Tool.fromFunction({ name: "note", input: Schema.String, output: Note, f: (text: string) => ({ text, n: 0 }) }),
  shout,
  Tool.fromFunction({
    name: "text",
    input: Note,
    output: Schema.String,
    f: (note: { readonly text: string }) => note.text
  }),
  len,
  half
)
Laws.arrow("Tool.pipeline (note >> shout >> text >> len >> half)", { tool: shoutLen, runs: 60 })

// A tool with a service of its own: `provide` is required by the types and used for each side.
class Dictionary extends Context.Service<Dictionary, { readonly lookup: (w: string) => string }>()("test/Dictionary") {
  static readonly layer = Layer.succeed(Dictionary, { lookup: (w: string) => (w === "hi" ? "hello" : w) })
}
const expand = Tool.make({
  name: "text.expand",
  description: "Expands abbreviations.",
  input: Schema.String,
  output: Schema.String,
  run: (s) => Dictionary.use((d) => Effect.succeed(d.lookup(s)))
})
Laws.category("a tool that needs a service (text.expand)", { tool: expand, provide: Dictionary.layer, runs: 60 })

// 10,000 pure steps, composed as a pipeline and as a left-nested chain of andThen, equal the fused function.
const stepCount = 10_000
const stepOf = (i: number) => (n: number) => (n * 31 + i) % 1_000_003
const steps = Array.from({ length: stepCount }, (_, i) =>
  Tool.fromFunction({ name: `s${i}`, input: Schema.Int, output: Schema.Int, f: stepOf(i) })
)
const fused = (n: number) => {
  let x = n
  for (let i = 0; i < stepCount; i++) x = stepOf(i)(x)
  return x
}
// Every step is Int -> Int, so the chain is valid; the cast only spares TypeScript a 10,000-element tuple.
const long = Tool.pipeline(...(steps as unknown as readonly [Tool.Tool<number, number>]))
const chained = steps.reduce((acc: Tool.Tool<number, number>, s) => Tool.andThen(acc, s))
const int = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 }))
Laws.checkAll(
  "Tool.pipeline of 10,000 steps",
  RuleSet.make("long pipelines", [
    Law.make("pipeline of 10,000 steps = the fused function", Arbitrary.schema(int), (n) =>
      Law.isEq(
        "pipeline(s0, …, s9999)",
        long.run(n),
        "fused",
        Effect.sync(() => fused(n))
      )
    ),
    Law.make("10,000 nested andThen = the fused function", Arbitrary.schema(int), (n) =>
      Law.isEq(
        "((s0 >> s1) >> …) >> s9999",
        chained.run(n),
        "fused",
        Effect.sync(() => fused(n))
      )
    )
  ]),
  { runs: 30 }
)

// orElse narrows the error type: the result fails only with the fallback's errors (checked by tsc).
class Missed extends Schema.TaggedError<Missed>()("Missed", {}) {}
const lookup = Tool.make({
  name: "cache.get",
  description: "Misses.",
  input: Schema.String,
  output: Schema.String,
  failure: Missed,
  run: () => Effect.fail(new Missed())
})
const origin = Tool.make({
  name: "origin.get",
  description: "Fails with Empty on an empty key.",
  input: Schema.String,
  output: Schema.String,
  failure: Empty,
  run: (k) => (k === "" ? Effect.fail(new Empty({ field: "key" })) : Effect.succeed(`value of ${k}`))
})
const fallback = Tool.orElse(lookup, origin)
expectTypeOf<Tool.Failure<typeof fallback>>().toEqualTypeOf<Empty>()
expectTypeOf<Tool.Failure<typeof lookup>>().toEqualTypeOf<Missed>()
Laws.combinators("Tool.orElse (cache.get | origin.get)", { tool: fallback, runs: 40, testTimeout: 60_000 })
