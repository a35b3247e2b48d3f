import { assert, describe, it } from "@effect/vitest"
import { Budget, Render } from "@ugent/agentese"

const audience = Render.audience({
  client: "claude-code",
  tools: [
    { path: "world.tools.file.read", name: "file.read" },
    { path: "world.tools.file.glob", name: "file.glob" },
    { path: "self.memory.read", name: "memory.read" },
    { path: "self.tools.clarify", name: "clarify" }
  ]
})

const read = {
  path: "docs/tools.md",
  content: "1\tUse world.tools.file.read or file.read to read.\n2\tThen clarify.",
  startLine: 1,
  endLine: 2,
  totalLines: 5,
  truncated: true,
  nextOffset: 3,
  linesCut: 0,
  metadata: { size: 90, modified: "2024-01-01T00:00:00Z", encoding: "utf-8", lineEndings: "lf" },
  proof: "rp1.abc.def"
}

describe("Render", () => {
  describe("audience", () => {
    it("takes the budget of the client it names, and the strictest for one it does not know", () => {
      assert.deepStrictEqual(audience.limit, { chars: 50_000 })
      assert.strictEqual(Render.audience({ client: "something-new" }).limit, Budget.strictest)
    })

    it("renames the tools a hint names, dotted paths and dotted own names, never a plain word", () => {
      assert.strictEqual(
        audience.rename("Use world.tools.file.read, or file.glob. Then memory.read; clarify stays."),
        "Use world_tools_file_read, or world_tools_file_glob. Then self_memory_read; clarify stays."
      )
      // A name inside a longer name or a path is not a tool's name.
      assert.strictEqual(audience.rename("src/file.read.ts and my.file.read"), "src/file.read.ts and my.file.read")
    })
  })

  describe("result", () => {
    it("a read: the header (path, lines of the total, the next offset as a call), then the lines as the tool numbers them", () => {
      assert.strictEqual(
        Render.result("world.tools.file.read", read, audience),
        [
          'docs/tools.md: lines 1-2 of 5; more: world_tools_file_read {"path":"docs/tools.md","offset":3}',
          // The file's own text is left as it is: only hints are renamed.
          "1\tUse world.tools.file.read or file.read to read.",
          "2\tThen clarify."
        ].join("\n")
      )
    })

    it("leaves the proof token out for a session that remembers proofs, and shows it to one that does not", () => {
      assert.notInclude(Render.result("world.tools.file.read", read, audience), "rp1.")
      const stateless = Render.audience({ remembersProofs: false })
      assert.include(Render.result("world.tools.file.read", read, stateless), "\nproof: rp1.abc.def")
      assert.notInclude(Render.outline({ ok: true, proof: "rp1.abc.def" }, audience), "rp1.")
    })

    it("an empty file and a read past the end say so in the header", () => {
      const empty = {
        ...read,
        content: "",
        startLine: 1,
        endLine: 0,
        totalLines: 0,
        nextOffset: null,
        notice: "The file is empty."
      }
      assert.strictEqual(Render.result("world.tools.file.read", empty, audience), "docs/tools.md: empty file")
    })

    it("grep: matches grouped by file, ripgrep's N:C:match (line, column) and N-context, -- between groups", () => {
      const output = {
        mode: "content",
        totalMatches: 3,
        filesSearched: 9,
        truncated: false,
        matches: [
          {
            path: "src/a.ts",
            matches: [
              {
                line: 2,
                column: 4,
                text: "// TODO one",
                before: [{ line: 1, text: "import x" }],
                after: [{ line: 3, text: "// TODO two" }]
              },
              { line: 3, column: 4, text: "// TODO two", before: [{ line: 2, text: "// TODO one" }], after: [] },
              { line: 9, column: 4, text: "// TODO far", before: [], after: [] }
            ]
          },
          { path: "src/b.ts", matches: [{ line: 1, column: 1, text: "TODO", before: [], after: [] }] }
        ]
      }
      assert.strictEqual(
        Render.result("world.tools.search.grep", output, audience),
        [
          "3 matches in 2 files",
          "src/a.ts",
          "1-import x",
          "2:4:// TODO one",
          "3:4:// TODO two",
          "--",
          "9:4:// TODO far",
          "",
          "src/b.ts",
          "1:1:TODO"
        ].join("\n")
      )
    })

    it("a git diff as a unified diff", () => {
      const diff = {
        base: "HEAD",
        compare: "working tree",
        stats: { filesChanged: 1, additions: 1, deletions: 1 },
        truncated: false,
        omittedFiles: 0,
        files: [
          {
            path: "a.txt",
            status: "modified",
            binary: false,
            additions: 1,
            deletions: 1,
            hunks: [
              {
                oldStart: 1,
                oldLines: 2,
                newStart: 1,
                newLines: 2,
                lines: [
                  { type: "context", content: "one", oldLine: 1, newLine: 1 },
                  { type: "delete", content: "two", oldLine: 2 },
                  { type: "add", content: "2", newLine: 2, noNewlineAtEnd: true }
                ]
              }
            ]
          }
        ]
      }
      assert.strictEqual(
        Render.result("world.tools.git.diff", diff, audience),
        [
          "1 file changed, +1/-1 (HEAD → working tree)",
          "diff --git a/a.txt b/a.txt",
          "--- a/a.txt",
          "+++ b/a.txt",
          "@@ -1,2 +1,2 @@",
          " one",
          "-two",
          "+2",
          "\\ No newline at end of file"
        ].join("\n")
      )
    })

    it("any other result: its family's summary above an outline", () => {
      const text = Render.result(
        "self.tools.task.list",
        { tasks: [{ id: "t1", title: "Ship\nit", status: "done" }] },
        audience,
        { summary: "1 task: 1 done" }
      )
      assert.strictEqual(
        text,
        ["1 task: 1 done", "tasks:", "  - id: t1", "    title: |", "      Ship", "      it", "    status: done"].join(
          "\n"
        )
      )
    })

    it("a result shaped unlike its path's is still shown, as an outline", () => {
      assert.strictEqual(Render.result("world.tools.file.read", { odd: 1 }, audience), "odd: 1")
    })
  })

  describe("failure", () => {
    it("begins with one plain line, then what to do next in the client's names, then what the message did not say", () => {
      const text = Render.failure(
        {
          _tag: "Forbidden",
          message:
            'world.tools.file.read refused: .env is a secret file (rule "secrets"). No trust level allows this; choose another target.',
          tool: "world.tools.file.read",
          rule: "secrets",
          where: 3
        },
        audience
      )
      assert.deepStrictEqual(text.split("\n"), [
        'Forbidden: world_tools_file_read refused: .env is a secret file (rule "secrets").',
        "No trust level allows this; choose another target.",
        'Details: {"where":3}'
      ])
    })
  })
})
