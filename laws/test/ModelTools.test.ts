/**
 * The algebraic laws over model steps (`ModelTool.make` of
 * `@ugent/agentese`), run with a scripted model: a `LanguageModel` whose
 * answer is a function of the prompt, so a model step is a deterministic
 * morphism and the category and arrow laws apply to it, alone and inside a
 * pipeline with ordinary tools.
 */
import { ModelTool } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { Tool } from "@ugent/core"
import { Laws } from "@ugent/laws"
import { Schema } from "effect"
import type { Prompt } from "effect/ai"

const prefix = "Shout this:\n"

/** The user text of a prompt. */
const userText = (prompt: Prompt.Prompt): string =>
  prompt.content
    .filter((m) => m.role === "user")
    .map((m) =>
      typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
    )
    .join("")

/** Answers every structured request with the prompt's text upper-cased: a pure function of the prompt. */
const model = Scripted.layer((request) =>
  Scripted.json({ text: userText(request.prompt).slice(prefix.length).toUpperCase() })
)

const shout = ModelTool.make({
  name: "text.shout",
  description: "Shouts a text.",
  input: Schema.String,
  output: Schema.Struct({ text: Schema.String }),
  prompt: (text) => `${prefix}${text}`
})

const check = { runs: 40, testTimeout: 60_000, provide: model } as const

Laws.category("ModelTool.make (scripted model)", { tool: shout, ...check })

const trim = Tool.fromFunction({
  name: "text.trim",
  input: Schema.String,
  output: Schema.String,
  f: (s: string) => s.trim()
})
const length = Tool.fromFunction({
  name: "text.length",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Number,
  f: ({ text }: { readonly text: string }) => text.length
})

Laws.arrow("trim >> a model step >> length (scripted model)", {
  tool: Tool.pipeline(trim, shout, length),
  ...check
})
