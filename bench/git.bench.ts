/**
 * The git tools against the git CLI on a generated repository of 5,000
 * commits over 3,000 files (written with `git fast-import` into a temp
 * directory, removed after the run). The baseline is the `git` command that
 * produces the same information, spawned from Node; "ours" is the tool run
 * through its public `run` with the workspace and the backend, parsing
 * included. The isomorphic backend is measured cold (a fresh backend: no
 * object cache) and warm (the same backend again).
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import { Trust } from "@ugent/core"
import { GitBackend, GitBlame, GitDiff, GitLog, GitStatus, Workspace } from "@ugent/tools"
import { type Effect, Layer, ManagedRuntime } from "effect"
import { generatedRepo, hasGit } from "../packages/tools/test/git/fixtures.ts"
import { type Bench, pairedMs, type Row, row } from "./Bench.ts"

const run = promisify(execFile)

const COMMITS = 5000
const FILES = 3000

type Services = Workspace.Workspace | GitBackend.GitBackend | Trust.L0

const runtimeFor = (root: string, backend: Layer.Layer<GitBackend.GitBackend>) =>
  ManagedRuntime.make(Layer.mergeAll(Workspace.layer({ root }).pipe(Layer.orDie), backend, Trust.grant(0)))

interface Case {
  readonly name: string
  readonly cli: ReadonlyArray<string>
  readonly tool: Effect.Effect<unknown, unknown, Services>
}

const bench: Bench = {
  name: "git",
  description: `git tools vs the git CLI on a generated repository (${COMMITS} commits, ${FILES} files)`,
  run: async () => {
    if (!hasGit) throw new Error("the git benchmark needs the git binary on PATH")
    const repo = generatedRepo({ commits: COMMITS, files: FILES })
    try {
      // A dirty working tree for status and the working-tree diff.
      for (let i = 0; i < 20; i++) {
        const file = path.join(
          repo.dir,
          `dir${String(i % 50).padStart(2, "0")}/f${String(i * 37 + 5).padStart(4, "0")}.txt`
        )
        if (fs.existsSync(file)) fs.appendFileSync(file, "dirty\n")
      }
      fs.writeFileSync(path.join(repo.dir, "untracked.txt"), "new\n")
      const git = (args: ReadonlyArray<string>) =>
        run("git", [...args], { cwd: repo.dir, maxBuffer: 512 * 1024 * 1024, env: { ...process.env, LC_ALL: "C" } })
      const cases: ReadonlyArray<Case> = [
        {
          name: "log -n 100 (with numstat)",
          cli: ["log", "-n", "100", "--numstat", "-z", "--format=%H%x1f%P%x1f%aN%x1f%aE%x1f%aI%x1f%cN%x1f%cI%x1f%B"],
          tool: GitLog.log.run({ limit: 100 })
        },
        {
          name: "status",
          cli: ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all"],
          tool: GitStatus.status.run({})
        },
        {
          name: "diff of 50 commits",
          cli: ["diff", "--raw", "--numstat", "-p", "-z", "HEAD~50", "HEAD"],
          tool: GitDiff.diff.run({ base: "HEAD~50", compare: "HEAD" })
        },
        {
          name: "blame of a long-lived file (500 revisions)",
          cli: ["blame", "--porcelain", "HEAD", "--", "dir00/f0000.txt"],
          tool: GitBlame.blame.run({ path: "dir00/f0000.txt", rev: "HEAD" })
        }
      ]
      const rows: Array<Row> = []
      const native = runtimeFor(repo.dir, GitBackend.layerNative)
      const warm = runtimeFor(repo.dir, GitBackend.layerIsomorphic)
      try {
        for (const c of cases) {
          const cli = () => git(c.cli)
          const [b1, ours] = await pairedMs(cli, () => native.runPromise(c.tool), 11)
          rows.push(row(`native: ${c.name}`, b1, ours, "ms", { target: "≤ 1.5" }))
          const [b2, cold] = await pairedMs(
            cli,
            async () => {
              const fresh = runtimeFor(repo.dir, GitBackend.layerIsomorphic)
              try {
                await fresh.runPromise(c.tool)
              } finally {
                await fresh.dispose()
              }
            },
            5
          )
          rows.push(row(`isomorphic cold: ${c.name}`, b2, cold, "ms", { note: "fresh backend, no object cache" }))
          const [b3, hot] = await pairedMs(cli, () => warm.runPromise(c.tool), 9)
          rows.push(
            row(`isomorphic warm: ${c.name}`, b3, hot, "ms", {
              ...(c.name.startsWith("log") ? { target: "≤ 20" } : {}),
              note: "same backend, caches kept"
            })
          )
        }
      } finally {
        await native.dispose()
        await warm.dispose()
      }
      return rows
    } finally {
      repo.dispose()
    }
  }
}

export default bench
