/**
 * The README's first commands keep working: `npm start` prints a report of
 * this repository (`ugent report`), and the quickstart demo runs.
 */
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { readFileSync } from "node:fs"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { userEnv } from "../scripts/packed.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

describe("npm start", () => {
  it("prints a status report of this repository and saves it under .ugent/reports", { timeout: 180_000 }, async () => {
    const { stdout, stderr } = await promisify(execFile)("npm", ["start", "--silent"], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024
    })
    expect(stdout).toMatch(/^# ugent-monorepo: project report\n/)
    // It opens with what the project is and how to start it, and a test fixture's string is no TODO.
    expect(stdout).toMatch(
      /\n\nugent-monorepo: ugent, a TypeScript library of [^\n]*To start: `npm install`, then `npm start`; the tests: `npm test`\.\n/
    )
    expect(stdout).not.toContain("ModelTool.test.ts")
    for (const title of ["## Last active area", "## Current state", "## Suggested next steps", "## Based on"]) {
      expect(stdout).toContain(title)
    }
    expect(stdout).toContain("`world.tools.file.list`")
    expect(stderr).toMatch(/report saved to .*\.ugent\/reports\/.*\.md/)
  })
})

describe("examples", () => {
  it("quickstart runs, denies the L0 reader and lets the L1 writer through", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, "examples/quickstart.ts")], {
      cwd: root
    })
    expect(stdout).toContain("pipeline: text.tokenize >> text.stats >> notes.save")
    expect(stdout).toContain('"_tag": "TrustDenied"')
    expect(stdout).toContain('"saved": "10 words, longest \\"functions\\""')
  })

  it("quickstart act 2: proofs, the forbidden list and a model's reply on the AGENTESE road", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, "examples/quickstart.ts")], {
      cwd: root
    })
    expect(stdout).toMatch(/read notes\.md: ok/)
    expect(stdout).toMatch(/overwrite without a proof: refused ProofRejected/)
    expect(stdout).toMatch(/edit with the proof: ok/)
    expect(stdout).toMatch(/read \.env: refused Forbidden/)
    expect(stdout).toMatch(/a model's reply made 2 calls: world\.tools\.file\.list ok; world\.tools\.file\.glob ok/)
  })

  describe("adapters: each ecosystem's loop over the served paths, driven by its own mock model", () => {
    // Each runs as its header says, in a user's shell: no @ugent/source condition set by the test runner.
    const run = async (name: string) => {
      const file = `examples/adapters/${name}.ts`
      const header = /Run it with `([^`]+)`/.exec(readFileSync(join(root, file), "utf8"))?.[1]
      expect(header).toBe(`npm run example ${file}`)
      const [command, ...args] = header!.split(" ")
      return (
        await promisify(execFile)(command!, [...args.slice(0, 2), "--silent", ...args.slice(2)], {
          cwd: root,
          env: userEnv()
        })
      ).stdout
    }

    it("Vercel AI SDK: MockLanguageModelV4, the person's approval of an edit, the session's proof", async () => {
      const stdout = await run("vercel")
      expect(stdout).toMatch(/world_tools_file_read: json .*"content":"1\\ttea"/)
      expect(stdout).toContain("approval asked: world_tools_file_edit")
      expect(stdout).toMatch(/world_tools_file_edit: json .*"diff"/)
      expect(stdout).toContain("model: notes.md lists tea and coffee.")
      expect(stdout).toContain('notes.md: "tea\\ncoffee\\n"')
    })

    it("LangChain.js: FakeStreamingChatModel with tool calls, ToolMessages, a path not offered", async () => {
      const stdout = await run("langchain")
      expect(stdout).toMatch(/world_tools_file_read: success /)
      expect(stdout).toMatch(/world_tools_file_edit: success /)
      expect(stdout).toContain("web fetch offered: false")
      expect(stdout).toContain('notes.md: "tea\\ncoffee\\n"')
    })

    it("raw OpenAI: the openai client against a replay server, strict tools", async () => {
      const stdout = await run("openai")
      expect(stdout).toMatch(/world_tools_file_edit: \{"path":"notes.md","diff"/)
      expect(stdout).toMatch(/strict tools offered: [1-9]/)
      expect(stdout).toContain("model: notes.md lists tea and coffee.")
      expect(stdout).toContain('notes.md: "tea\\ncoffee\\n"')
    })

    it("raw Anthropic: the @anthropic-ai/sdk client against a replay server, a TrustDenied the model reads", async () => {
      const stdout = await run("anthropic")
      expect(stdout).toMatch(/refused: \{"_tag":"TrustDenied"/)
      expect(stdout).toContain("model: notes.md lists tea and coffee.")
      expect(stdout).toContain('notes.md: "tea\\ncoffee\\n"')
    })
  })
})
