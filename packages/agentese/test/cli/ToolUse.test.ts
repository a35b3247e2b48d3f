/**
 * The `<tool_use>` form of the command-execution document's MCP prompt
 * (`<tool_name>` and `<parameters>`), run through `ugent exec` as a model's
 * response: before, only `<name>`/`<input>` parsed and this form was a
 * `ParseError`.
 */
import { assert, describe, it } from "vitest"
import { ugent, workspace } from "./fixture.ts"

interface Outcome {
  readonly ok: boolean
  readonly path?: string
  readonly result?: { readonly content?: string }
  readonly error?: { readonly _tag: string }
}

const outcomesOf = (stdout: string): ReadonlyArray<Outcome> =>
  (JSON.parse(stdout.trim().split("\n").at(-1)!) as { readonly outcomes: ReadonlyArray<Outcome> }).outcomes

describe("ugent exec reads the <tool_use> form with <tool_name> and <parameters>", () => {
  it("threat: the document's <tool_name>/<parameters> block is refused with ParseError", async () => {
    const root = workspace({ "c.txt": "one\ntwo\nthree\n" })
    const text = [
      "I will read the middle line, then the file list.",
      "<tool_use>",
      "<tool_name>world_tools_file_read</tool_name>",
      "<parameters>",
      "<path>c.txt</path>",
      "<startLine>2</startLine>",
      "<endLine>2</endLine>",
      "</parameters>",
      "</tool_use>",
      '<tool_use><tool_name>world.tools.file.glob</tool_name><parameters>{"pattern": "*.md"}</parameters></tool_use>'
    ].join("\n")
    const run = await ugent(["exec", "--text", text, "--json", "--stores", "memory"], { cwd: root })
    assert.strictEqual(run.code, 0, run.stderr)
    const outcomes = outcomesOf(run.stdout)
    assert.deepStrictEqual(
      outcomes.map((o) => [o.ok, o.path]),
      [
        [true, "world.tools.file.read"],
        [true, "world.tools.file.glob"]
      ]
    )
    assert.strictEqual(outcomes[0]!.result?.content, "2\ttwo")
  }, 60_000)
})
