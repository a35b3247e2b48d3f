// The ten-line example of laws/README.md, verbatim: a user checking their own tool.
import { Tool } from "@ugent/core"
import { Laws } from "@ugent/laws"
import { Schema } from "effect"

const slugify = Tool.fromFunction({
  name: "text.slugify",
  input: Schema.String,
  output: Schema.String,
  f: (s: string) =>
    s
      .toLowerCase()
      .trim()
      .replace(/[^a-z0-9]+/g, "-")
})

Laws.arrow("text.slugify", { tool: slugify }) // 18 named tests: the category laws, then the arrow laws
