/**
 * Type-level guarantees of `Cached`, checked by `tsc` (this file is under
 * `packages/*\/test`, which tsconfig includes). Each `@ts-expect-error` line
 * must stay an error: if a guarantee stops holding, the directive itself fails
 * the type check.
 */
import { Tool, Trust } from "@ugent/core"
import { Cached } from "@ugent/wrappers"
import { Effect, Schema } from "effect"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assertType = <T extends true>(_: T) => {}

class Missing extends Schema.TaggedError<Missing>()("Missing", { path: Schema.String }) {}

const read = Tool.make({
  name: "file.read",
  description: "Reads a file.",
  input: Schema.Struct({ path: Schema.String }),
  output: Schema.String,
  failure: Missing,
  effects: { readsFs: true },
  run: ({ path }) => Effect.succeed(path)
})

const write = Tool.make({
  name: "file.write",
  description: "Writes a file.",
  trust: 1,
  effects: { writesFs: true },
  input: Schema.Struct({ path: Schema.String, content: Schema.String }),
  output: Schema.String,
  run: ({ path }) => Effect.succeed(path)
})

const shell = Tool.make({
  name: "system.bash",
  description: "Runs a command.",
  trust: 3,
  effects: { callsShell: true },
  input: Schema.Struct({ command: Schema.String }),
  output: Schema.String,
  run: ({ command }) => Effect.succeed(command)
})

// A read-only tool is accepted in both styles, and keeps its types.
const cached = Cached(read, { timeToLive: "1 minute" })
const piped = read.pipe(Cached())
assertType<Equals<Tool.Input<typeof cached>, { readonly path: string }>>(true)
assertType<Equals<Tool.Output<typeof piped>, string>>(true)
assertType<Equals<Tool.Failure<typeof piped>, Missing>>(true)
assertType<Equals<Tool.Requirements<typeof cached>, Trust.L0>>(true)

// A pure function lifted to a tool is read-only too.
Cached(Tool.fromFunction({ name: "len", f: (s: string) => s.length }))

// @ts-expect-error a write (L1) cannot be cached
Cached(write)
// @ts-expect-error a write cannot be cached in the pipe style either
write.pipe(Cached())
// @ts-expect-error a shell call (L3) cannot be cached
Cached(shell, { capacity: 10 })
// @ts-expect-error a gated writer keeps TrustDenied in its errors, so it is not read-only
Cached(Trust.gate(write))
