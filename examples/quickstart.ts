/**
 * The five-minute tour as a program: three small tools composed into a
 * pipeline, checked by the compiler at every seam, gated by trust, and run
 * for two callers, one of whom may not run the write at the end.
 *
 * Run it with `npm start`.
 */
import { Boundary, Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Effect, Schema } from "effect"

// 1. Tools: typed morphisms with schemas, a trust level and declared effects.
const Text = Schema.Struct({ text: Schema.String })
const Stats = Schema.Struct({ words: Schema.Int, longest: Schema.String })

const tokenize = Tool.fromFunction({
  name: "text.tokenize",
  input: Text,
  output: Schema.Array(Schema.String),
  f: ({ text }: { readonly text: string }) => text.split(/\W+/).filter((w) => w !== "")
})

const stats = Tool.make({
  name: "text.stats",
  description: "Counts words and finds the longest.",
  input: Schema.Array(Schema.String),
  output: Stats,
  run: (words) =>
    Effect.succeed({ words: words.length, longest: words.reduce((a, b) => (b.length > a.length ? b : a), "") })
})

const notes: Array<string> = []
const saveNote = Tool.make({
  name: "notes.save",
  description: "Saves a one-line note about the stats.",
  trust: 1,
  effects: { writesFs: true, idempotent: false },
  input: Stats,
  output: Schema.Struct({ saved: Schema.String }),
  run: ({ words, longest }) =>
    Effect.sync(() => {
      const line = `${words} words, longest "${longest}"`
      notes.push(line)
      return { saved: line }
    })
})

// 2. Compose: `tokenize >> stats >> notes.save`. Swap two steps and it no longer compiles.
const summarize = Tool.pipeline(tokenize, stats, saveNote)

// 3. Gate: the pipeline needs L1 (it writes); the gate checks the caller at run time.
const gated = Trust.gate(summarize)

const callAs = (id: string, trust: Trust.TrustLevel) =>
  Boundary.runJson(gated, { text: "Tools compose like functions, and the compiler checks every seam." }).pipe(
    Effect.provide(Observer.layer({ id, trust }))
  )

const program = Effect.gen(function* () {
  console.log(`pipeline: ${summarize.name}`)
  console.log(`trust: L${summarize.trust}, writes: ${summarize.effects.writesFs}\n`)

  const reader = yield* callAs("reader", 0)
  console.log("as an L0 reader:", JSON.stringify(reader, null, 2))

  const writer = yield* callAs("writer", 1)
  console.log("\nas an L1 writer:", JSON.stringify(writer, null, 2))

  console.log("\nnotes saved:", notes)
  if (reader.ok || !writer.ok || reader.error._tag !== "TrustDenied") {
    return yield* Effect.die(new Error("quickstart: unexpected outcome"))
  }
  console.log(`\n${ToolError.messageOf(reader.error)}`)
})

Effect.runPromise(program).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
