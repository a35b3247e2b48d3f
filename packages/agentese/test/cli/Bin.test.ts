/**
 * The binary's own entry (bin/ugent.js), before the command line is loaded:
 * the Node version it refuses, and `--version` answered from the manifest.
 */
import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Cli } from "@ugent/agentese"
import { bin, ugent, workspace } from "./fixture.ts"

/** Runs the binary on a Node that reports `version` (the real one underneath). */
const onNode = (version: string, args: ReadonlyArray<string>) =>
  ugent(args, {
    cwd: workspace(),
    command: [
      process.execPath,
      "--import",
      `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`,
      bin
    ]
  })

const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  readonly version: string
  readonly engines: { readonly node: string }
}

describe("bin/ugent.js", () => {
  it("refuses a Node older than 22.19 with one line that names the version needed", async () => {
    for (const version of ["20.20.2", "22.18.0", "18.0.0"]) {
      const run = await onNode(version, ["list"])
      assert.strictEqual(run.code, 1)
      assert.strictEqual(run.stdout, "")
      assert.strictEqual(
        run.stderr,
        `ugent: needs Node.js 22.19 or newer, and this is Node.js ${version}; install a newer Node (https://nodejs.org) and run it again.\n`
      )
    }
  })

  it("lets Node 22.19 through, the version the manifest's engines name", async () => {
    assert.strictEqual(manifest.engines.node, ">=22.19.0")
    const run = await onNode("22.19.0", ["--version"])
    assert.strictEqual(run.code, 0, run.stderr)
  })

  it("--version prints the package's version, the one the command line reports", async () => {
    const run = await ugent(["--version"], { cwd: workspace() })
    assert.strictEqual(run.stdout, `ugent v${manifest.version}\n`)
    assert.strictEqual(Cli.version, manifest.version)
  })
})
