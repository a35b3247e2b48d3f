/**
 * A tool family as a user would write one: one folder, its tools, the layer
 * of the service they need, and how large results are told. Nothing else in
 * the repository knows of it; the test registers it with one line.
 */
import { Family, Tool } from "@ugent/core"
import { Context, Effect, Layer, Ref, Schema } from "effect"

/** Where the notes are kept: the family's own service, built by its own layer. */
export class NoteBook extends Context.Service<NoteBook, Ref.Ref<ReadonlyArray<string>>>()("test/NoteBook") {}

const add = Tool.make({
  name: "notes.add",
  description: "Adds a note.",
  trust: 1,
  effects: { writesFs: true },
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Struct({ count: Schema.Int }),
  run: ({ text }) =>
    Effect.flatMap(NoteBook, (book) => Ref.updateAndGet(book, (notes) => [...notes, text])).pipe(
      Effect.map((notes) => ({ count: notes.length }))
    )
})

const list = Tool.make({
  name: "notes.list",
  description: "Lists the notes.",
  input: Schema.Struct({}),
  output: Schema.Struct({ notes: Schema.Array(Schema.String) }),
  run: () => Effect.map(Effect.flatMap(NoteBook, Ref.get), (notes) => ({ notes }))
})

export const family = Family.make({
  name: "notes",
  prefix: "self.tools",
  tools: { "notes.add": add, "notes.list": list },
  layer: Layer.effect(NoteBook, Ref.make<ReadonlyArray<string>>([])),
  present: { "notes.list": (o) => ({ summary: `${o.notes.length} notes` }) }
})
