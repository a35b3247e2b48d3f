/**
 * What the CLI tests share: the real `ugent` binary run in a child process
 * (Node 24, the one running the tests), and temp workspaces removed after
 * each test.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach } from "vitest"

/** The binary, as npm links it (`bin` of @ugent/agentese). */
export const bin = fileURLToPath(new URL("../../bin/ugent.js", import.meta.url))

/** The repository root. */
export const repository = fileURLToPath(new URL("../../../../", import.meta.url))

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A temp workspace with `a.txt` and `b.md`, removed after the test. */
export const workspace = (files: Record<string, string> = {}): string => {
  const root = mkdtempSync(join(tmpdir(), "ugent-cli-"))
  made.push(root)
  writeFileSync(join(root, "a.txt"), "alpha\nbeta\n")
  writeFileSync(join(root, "b.md"), "# b\n")
  for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content)
  return root
}

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `ugent args…` to completion in `cwd` (stdin closed, or fed `stdin`). */
export const ugent = (
  args: ReadonlyArray<string>,
  options: {
    readonly cwd: string
    readonly stdin?: string
    readonly command?: ReadonlyArray<string>
    readonly env?: Record<string, string>
  }
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const [file, ...pre] = options.command ?? [process.execPath, bin]
    const child = spawn(file!, [...pre, ...args], {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: "1", ...options.env }
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c
    })
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.stdin ?? "")
  })

/** Parses stdout as exactly one JSON object (fails on anything else, a second object included). */
export const onlyJson = (run: Run): Record<string, unknown> & { ok?: boolean } => {
  const text = run.stdout.trim()
  if (text.split("\n").length !== 1) throw new Error(`stdout is not one line of JSON:\n${run.stdout}\n${run.stderr}`)
  const value = JSON.parse(text) as unknown
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`not an object: ${text}`)
  return value as Record<string, unknown>
}

/** Starts a long-running `ugent` child (serve, mcp); the test stops it. */
export const start = (args: ReadonlyArray<string>, cwd: string): ChildProcess =>
  spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, NO_COLOR: "1" } })

/** Waits for a child to exit and returns its code. */
export const exited = (child: ChildProcess): Promise<number | null> =>
  child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.on("exit", resolve))

/** Whether `git` is on the PATH. */
export const hasGit = (() => {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()
