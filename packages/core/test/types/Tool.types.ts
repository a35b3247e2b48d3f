/**
 * Type-level guarantees of the tool algebra, checked by `tsc` (part of `npm test`).
 * Each `@ts-expect-error` line must stay an error: if a guarantee silently stops
 * holding, the directive itself becomes an error and the build fails.
 */
import { Observer, ReadProof, Tool, type ToolError, Trust } from "@ugent/core"
import { Effect, Schema } from "effect"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assertType = <T extends true>(_: T) => {}

const parse = Tool.fromFunction({ name: "parse", f: (s: string) => Number(s) })
const double = Tool.fromFunction({ name: "double", f: (n: number) => n * 2 })
const show = Tool.fromFunction({ name: "show", f: (n: number) => `${n}` })
const len = Tool.fromFunction({ name: "len", f: (s: string) => s.length })
const isEven = Tool.fromFunction({ name: "isEven", f: (n: number) => n % 2 === 0 })
const yesNo = Tool.fromFunction({ name: "yesNo", f: (b: boolean) => (b ? "yes" : "no") })

// A well-typed six-step pipeline compiles, with the end types inferred.
const six = Tool.pipeline(parse, double, show, len, isEven, yesNo)
assertType<Equals<Tool.Input<typeof six>, string>>(true)
assertType<Equals<Tool.Output<typeof six>, "yes" | "no">>(true)

// A mismatch in the middle of a six-step pipeline is a compile error at that step:
// `len` expects a string, and `double` gives a number.
// @ts-expect-error step 3 does not accept step 2's output
Tool.pipeline(parse, double, len, isEven, yesNo, len)

// andThen checks the seam too, in both styles.
// @ts-expect-error double gives a number, len takes a string
Tool.andThen(double, len)
// @ts-expect-error the same seam in pipe style
double.pipe(Tool.andThen(len))

// Subtypes compose: an output with more fields feeds an input that needs fewer.
const point = Tool.fromFunction({ name: "point", f: (n: number) => ({ x: n, y: n, label: "p" }) })
const norm = Tool.fromFunction({
  name: "norm",
  f: (p: { readonly x: number; readonly y: number }) => Math.hypot(p.x, p.y)
})
Tool.andThen(point, norm)

// orElse narrows the error type to the fallback's.
class Miss extends Schema.TaggedError<Miss>()("Miss", {}) {}
class Down extends Schema.TaggedError<Down>()("Down", {}) {}
const cache = Tool.make({
  name: "cache",
  description: "d",
  input: Schema.String,
  output: Schema.String,
  failure: Miss,
  run: () => Effect.fail(new Miss())
})
const origin = Tool.make({
  name: "origin",
  description: "d",
  input: Schema.String,
  output: Schema.String,
  failure: Down,
  run: () => Effect.fail(new Down())
})
assertType<Equals<Tool.Failure<typeof cache>, Miss>>(true)
const fallback = Tool.orElse(cache, origin)
assertType<Equals<Tool.Failure<typeof fallback>, Down>>(true)

// all: collect-all reports failures together as AllFailed; fail-fast keeps the union.
const collected = Tool.all({ a: cache, b: origin })
assertType<Equals<Tool.Failure<typeof collected>, ToolError.AllFailed<Miss | Down>>>(true)
const fast = Tool.all({ a: cache, b: origin }, { mode: "fail-fast" })
assertType<Equals<Tool.Failure<typeof fast>, Miss | Down>>(true)
assertType<Equals<Tool.Output<typeof fast>, { a: string; b: string }>>(true)

// ---------------------------------------------------------------------------
// Trust in the type system
// ---------------------------------------------------------------------------

const publish = Tool.make({
  name: "site.publish",
  description: "Publishes the site.",
  trust: 2,
  effects: { writesFs: true },
  input: Schema.String,
  output: Schema.String,
  run: (s) => Effect.succeed(s)
})
assertType<Equals<Tool.Requirements<typeof publish>, Trust.L2>>(true)

// An ungated L2 tool cannot be run: its R still needs Trust.L2.
// @ts-expect-error Trust.L2 is not provided
Effect.runPromise(publish.run("x"))

// A grant of L1 does not satisfy L2.
// @ts-expect-error grant(1) provides L0 | L1 only
Effect.runPromise(publish.run("x").pipe(Effect.provide(Trust.grant(1))))

// A grant of L2 does.
Effect.runPromise(publish.run("x").pipe(Effect.provide(Trust.grant(2))))

// A gated tool can be run once an Observer is provided; its R no longer mentions trust,
// and its E gains the gate's errors.
const gated = Trust.gate(publish)
assertType<Equals<Tool.Requirements<typeof gated>, Observer.Observer>>(true)
assertType<Equals<Tool.Failure<typeof gated>, ToolError.Forbidden | ToolError.TrustDenied | ToolError.ApprovalDenied>>(
  true
)
Effect.runPromise(gated.run("x").pipe(Effect.provide(Observer.layer({ id: "me", trust: 2 }))))
// @ts-expect-error the gate needs an Observer
Effect.runPromise(gated.run("x"))

// A gated read-only tool cannot be denied by level: only Forbidden is added.
const peek = Tool.make({
  name: "peek",
  description: "d",
  input: Schema.String,
  output: Schema.String,
  run: Effect.succeed
})
const gatedPeek = Trust.gate(peek)
assertType<Equals<Tool.Failure<typeof gatedPeek>, ToolError.Forbidden>>(true)

// The read-only helper accepts L0 tools (gated or not) and refuses writers (gated or not).
const readOnlyOnly = <T extends Tool.Any>(tool: T & Trust.ReadOnly<T>): T => tool
readOnlyOnly(peek)
readOnlyOnly(Trust.gate(peek))
readOnlyOnly(double)
// @ts-expect-error an L2 writer is not read-only
readOnlyOnly(publish)
// @ts-expect-error a gated writer is still not read-only
readOnlyOnly(gated)
assertType<Equals<Trust.IsReadOnly<typeof publish>, false>>(true)
assertType<Equals<Trust.IsReadOnly<typeof peek>, true>>(true)

// Composition carries every step's capability.
const both = Tool.andThen(peek, publish)
assertType<Equals<Tool.Requirements<typeof both>, Trust.L0 | Trust.L2>>(true)
// @ts-expect-error L1 is not enough for a pipeline that contains an L2 step
Effect.runPromise(both.run("x").pipe(Effect.provide(Trust.grant(1))))

// ---------------------------------------------------------------------------
// ReadProof
// ---------------------------------------------------------------------------

const write = Tool.make({
  name: "note.overwrite",
  description: "Overwrites a note.",
  trust: 1,
  effects: { writesFs: true },
  input: Schema.Struct({ path: Schema.String, proof: ReadProof.ReadProofFromToken }),
  output: Schema.String,
  run: ({ proof }) => Effect.succeed(proof.path)
})
type WriteInput = Tool.Input<typeof write>
assertType<Equals<WriteInput extends ReadProof.RequiresProof ? true : false, true>>(true)

// A plain object with every field of a proof is not a proof.
const forged = {
  path: "/ws/a.txt",
  hash: "00",
  size: 1,
  coverage: { _tag: "Whole" as const },
  issuedAt: 0,
  token: "rp1.x.y"
}
// @ts-expect-error a plain object is not a ReadProof
write.run({ path: "/ws/a.txt", proof: forged })
// @ts-expect-error nor is it assignable to the ReadProof type
const notAProof: ReadProof.ReadProof = forged
void notAProof

// ---------------------------------------------------------------------------
// Spread pipelines and tuple `all`
// ---------------------------------------------------------------------------

const doubles: ReadonlyArray<typeof double> = [double, double, double]
const spread = Tool.pipeline(parse, ...doubles)
assertType<Equals<Tool.Output<typeof spread>, number>>(true)
const lens: ReadonlyArray<typeof len> = [len, len]
// @ts-expect-error a spread of string steps cannot follow a number output
Tool.pipeline(parse, ...lens)

const tuple = Tool.all([double, show])
assertType<Equals<Tool.Output<typeof tuple>, [number, string]>>(true)
assertType<Equals<Tool.Input<typeof tuple>, number>>(true)
