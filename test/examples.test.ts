/**
 * `npm start` runs the main demo: the README's first command must keep working.
 */
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

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
})
