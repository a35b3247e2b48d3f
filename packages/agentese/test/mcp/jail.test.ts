/**
 * The jail's holes (threats 32–37 and the wider secret list), tried through
 * the real entry points: the official MCP SDK client against `ugent mcp`,
 * and the `ugent` CLI. The tools' own tests prove each check on both git
 * backends; these prove the served road keeps them.
 */
import { execFileSync } from "node:child_process"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, assert, describe, it } from "vitest"
import { hasGit, onlyJson, ugent, workspace } from "../cli/fixture.ts"
import { type CallResult, connect, failureOf, ugentBin } from "./fixtures/connect.ts"

const slow = { timeout: 120_000 }
const git = (root: string, ...args: Array<string>) =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: root, stdio: "pipe" })

/** A repository whose committed etc/passwd is now under a link to the host's /etc, with hostile config. */
const hostile = (): string => {
  const root = mkdtempSync(join(tmpdir(), "ugent-jail-"))
  for (const [name, content] of Object.entries({
    "README.md": "hello\n",
    ".env.production": "TOKEN=hunter2\n",
    "deploy.key": "k\n",
    "secretStore.ts": "export const store = 1\n"
  })) {
    writeFileSync(join(root, name), content)
  }
  git(root, "init", "-q")
  mkdirSync(join(root, "etc"))
  writeFileSync(join(root, "etc", "passwd"), "committed line\n")
  git(root, "add", ".")
  git(root, "commit", "-qm", "start")
  execFileSync("rm", ["-r", join(root, "etc")])
  symlinkSync("/etc", join(root, "etc"))
  symlinkSync("/", join(root, "rootlink"))
  // Config that names host files git would open, and a hooks path inside the tree.
  writeFileSync(
    join(root, ".git", "config"),
    `${readFileSync(join(root, ".git", "config"), "utf8")}[blame]\n\tignoreRevsFile = /etc/hostname\n[core]\n\thooksPath = .githooks\n`
  )
  mkdirSync(join(root, ".githooks"))
  writeFileSync(join(root, ".githooks", "pre-commit"), "#!/bin/sh\nexit 0\n")
  chmodSync(join(root, ".githooks", "pre-commit"), 0o755)
  return root
}

const text = (result: CallResult): string =>
  ((result.content as Array<{ type: string; text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join("\n")

describe.skipIf(!hasGit)("the jail through the served road", () => {
  const root = hostile()
  const clientP = connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [ugentBin, "mcp", "--root", root, "--trust", "L1"],
      stderr: "ignore"
    })
  )
  afterAll(async () => {
    await (await clientP).close()
    rmSync(root, { recursive: true, force: true })
  })
  const call = async (name: string, args: Record<string, unknown>) =>
    (await (await clientP).callTool({ name, arguments: args })) as CallResult

  it("threat 32 over MCP: git.blame never reads the host's /etc/passwd through a linked directory", slow, async () => {
    const result = await call("world_tools_git_blame", { path: "etc/passwd" })
    assert.isTrue(result.isError)
    assert.notInclude(text(result), "root:")
    assert.strictEqual(failureOf(result)._tag, "OutsideWorkspace")
  })

  it("threat 33 over MCP: a config file git would open is never read, and stderr never shows", slow, async () => {
    const result = await call("world_tools_git_blame", { path: "README.md" })
    const hostname = readFileSync("/etc/hostname", "utf8").trim()
    assert.notInclude(text(result), hostname)
    assert.isFalse(result.isError === true, text(result))
  })

  it(
    "threat 34 over MCP: a repository whose alternates name a store outside the root shows none of it",
    slow,
    async () => {
      const outside = mkdtempSync(join(tmpdir(), "ugent-outside-"))
      try {
        git(outside, "init", "-q")
        writeFileSync(join(outside, "notes.txt"), "OUTSIDE-SECRET\n")
        git(outside, "add", ".")
        git(outside, "commit", "-qm", "outside history")
        git(root, "clone", "-q", "--shared", outside, join(root, "copy"))
        const result = await call("world_tools_git_log", { repository: "copy", includeDiff: true, maxDiffSize: 100000 })
        assert.isTrue(result.isError, text(result))
        assert.deepInclude(failureOf(result), { _tag: "NotARepository" })
        assert.match(text(result), /alternates/)
        assert.notInclude(text(result), "OUTSIDE-SECRET")
        assert.notInclude(text(result), "outside history")
      } finally {
        rmSync(outside, { recursive: true, force: true })
      }
    }
  )

  it("threat 35 over MCP: a glob through a link to / lists nothing", slow, async () => {
    const control = await call("world_tools_file_glob", { pattern: "*.md" })
    assert.deepStrictEqual((control.structuredContent as { files?: Array<string> }).files, ["README.md"])
    const result = await call("world_tools_file_glob", { pattern: "rootlink/etc/*", hidden: true })
    assert.notInclude(text(result), "rootlink/etc/passwd")
    const files = (result.structuredContent as { files?: Array<string> } | undefined)?.files ?? []
    assert.deepStrictEqual(files, [])
  })

  it("threat 37 over MCP: the hook git runs is not writable at L1, and nothing is written", slow, async () => {
    const read = await call("world_tools_file_read", { path: ".githooks/pre-commit" })
    assert.isFalse(read.isError === true, text(read))
    const write = await call("world_tools_file_write", { path: ".githooks/pre-commit", content: "#!/bin/sh\nid\n" })
    assert.isTrue(write.isError)
    assert.strictEqual(readFileSync(join(root, ".githooks", "pre-commit"), "utf8"), "#!/bin/sh\nexit 0\n")
  })

  it(
    "the secret list over MCP: .env.production and deploy.key are refused, naming the rule; secretStore.ts reads",
    slow,
    async () => {
      for (const path of [".env.production", "deploy.key"]) {
        const result = await call("world_tools_file_read", { path })
        assert.isTrue(result.isError, path)
        assert.notInclude(text(result), path === ".env.production" ? "hunter2" : "\nk")
        assert.match(failureOf(result)._tag, /Forbidden|BlockedPath/)
      }
      const source = await call("world_tools_file_read", { path: "secretStore.ts" })
      assert.isFalse(source.isError === true, text(source))
    }
  )

  it(
    "threat 36 through the CLI: a planted .ugent link is refused, and nothing is written where it points",
    slow,
    async () => {
      const planted = workspace({ "a.txt": "a\n" })
      const elsewhere = workspace()
      symlinkSync(elsewhere, join(planted, ".ugent"))
      const run = await ugent(["invoke", "world.tools.file.read", "--input", '{"path":"a.txt"}', "--json"], {
        cwd: planted
      })
      assert.notStrictEqual(run.code, 0)
      assert.include(JSON.stringify(onlyJson(run)), "symbolic link")
      for (const name of [".gitignore", "proof.key", "ugent.db"])
        assert.isFalse(existsSync(join(elsewhere, name)), name)
    }
  )
})
