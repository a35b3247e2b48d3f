/**
 * `ugent report`, the real binary in a child process: `--json` prints one
 * object with the report and where it was saved; without it, the Markdown's
 * body on stdout and where it was saved on stderr; a configured model is
 * said, and `--deterministic` keeps quiet about it.
 */
import { existsSync, readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Report } from "@ugent/agentese"
import { Schema } from "effect"
import { onlyJson, ugent } from "../cli/fixture.ts"
import { emptyFolder, folder, hasGit, repository, TODO } from "./fixture.ts"

// Each run starts a Node process that loads the sources: slow on a loaded machine.
const slow = { timeout: 180_000 }

describe("ugent report", () => {
  it.skipIf(!hasGit)(
    "--json prints one object: the report (as the schema says) and the saved files; a configured model is said on stderr",
    slow,
    async () => {
      const root = repository([
        {
          date: "2024-01-01T00:00:00Z",
          message: "First",
          files: { "package.json": JSON.stringify({ name: "cli-fixture" }), "src/a.ts": `// ${TODO}: x\n` }
        }
      ])
      const run = await ugent(["report", "--root", root, "--json"], {
        cwd: emptyFolder(),
        env: { UGENT_MODEL: "openai:gpt-4.1-mini" }
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(
        run.stderr,
        "UGENT_MODEL=openai:gpt-4.1-mini is set, but this ugent has no model-driven report yet"
      )
      const out = onlyJson(run) as { ok: boolean; report: unknown; saved: { markdown: string; json: string } }
      assert.isTrue(out.ok)
      const report = Schema.decodeUnknownSync(Report.Report)(out.report)
      assert.strictEqual(report.project, "cli-fixture")
      assert.strictEqual(report.mode, "deterministic")
      assert.isTrue(report.facts!.git.available)
      assert.strictEqual(report.facts!.todos.items[0]?.commit?.date.slice(0, 10), "2024-01-01")
      assert.deepStrictEqual(
        Schema.decodeUnknownSync(Report.Report)(JSON.parse(readFileSync(out.saved.json, "utf8"))),
        report
      )
      assert.strictEqual(readFileSync(out.saved.markdown, "utf8"), Report.markdown(report))
    }
  )

  it("prints the sections of a folder that is no repository, and where the report was saved", slow, async () => {
    const root = folder({ "pyproject.toml": '[project]\nname = "plain"\n', "plain/__init__.py": "" })
    const run = await ugent(["report", "--deterministic"], { cwd: root, env: { UGENT_MODEL: "openai:x" } })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.notInclude(run.stderr, "UGENT_MODEL")
    assert.isTrue(run.stdout.startsWith("# plain: project report\n"), run.stdout)
    for (const title of ["## Last active area", "## Current state", "## Suggested next steps", "## Based on"]) {
      assert.include(run.stdout, title)
    }
    assert.include(run.stdout, "Git facts are unavailable: No git repository at .: there is no .git there.")
    assert.notInclude(run.stdout, "toolCalls:")
    const saved = /report saved to (\S+\.md) and (\S+\.json)/.exec(run.stderr)
    assert.isNotNull(saved, run.stderr)
    assert.isTrue(existsSync(saved![1]!) && existsSync(saved![2]!))
    assert.isTrue(readFileSync(saved![1]!, "utf8").startsWith("---\nprotocol: project-resurrection\n"))
  })
})
