/**
 * `ugent report` without a model on a generated repository of 5,000 commits
 * over 3,000 files (`git fast-import`, once per run, removed after it),
 * with a manifest, a DEVLOG of 800 lines, 40 TODO markers, tests, CI and
 * uncommitted work on top.
 *
 * - The whole report, in process (`Report.run`: the road built, 15 calls,
 *   the report saved) and through the CLI (`ugent report --json`, a new
 *   Node process), against the shell commands that gather the same facts
 *   (`ls`, `git`, `rg`, `find`, `cat`, `tail`); the target is absolute:
 *   ≤ 3 s.
 * - The CLI's start alone (`ugent --version`), to tell start-up from work.
 * - The git facts: the report's own git calls (status, the log of 100
 *   commits with their files, the blame windows), replayed one after the
 *   other through the road, against the git commands that give the same
 *   information, one after the other: ≤ 1.5×.
 *
 * Baseline and ours are measured alternately, so a change in the load of a
 * shared machine hits both alike.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Invoke, Report, Server } from "@ugent/agentese"
import { Effect, ManagedRuntime } from "effect"
import { generatedRepo, hasGit } from "../packages/tools/test/git/fixtures.ts"
import { type Bench, pairedMs, type Row, row } from "./Bench.ts"

const run = promisify(execFile)
const bin = fileURLToPath(new URL("../packages/agentese/bin/ugent.js", import.meta.url))

const COMMITS = 5000
const FILES = 3000
const TODO = ["TO", "DO"].join("")

/** A project on top of the generated history: manifest, DEVLOG, markers, tests, CI, uncommitted work. */
const decorate = (repo: ReturnType<typeof generatedRepo>) => {
  const write = (name: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(repo.dir, name)), { recursive: true })
    fs.writeFileSync(path.join(repo.dir, name), content)
  }
  write(
    "package.json",
    JSON.stringify(
      { name: "generated", version: "1.0.0", scripts: { test: "vitest run" }, dependencies: { effect: "^4.1.0" } },
      null,
      2
    )
  )
  const devlog: Array<string> = []
  for (let i = 0; i < 40; i++) {
    devlog.push(`## 2024-02-${String((i % 28) + 1).padStart(2, "0")}`, "")
    for (let k = 0; k < 18; k++) devlog.push(`- worked on dir${String(k).padStart(2, "0")} (${i}.${k})`)
  }
  devlog.push("- [ ] next: finish the exporter")
  write("DEVLOG.md", `${devlog.join("\n")}\n`)
  for (let k = 0; k < 40; k++) {
    const f = 100 + k * 7
    const name = `dir${String(f % 50).padStart(2, "0")}/f${String(f).padStart(4, "0")}.txt`
    fs.appendFileSync(path.join(repo.dir, name), `// ${TODO}: item ${k}\n`)
  }
  for (let k = 0; k < 20; k++) write(`test/t${k}.test.ts`, `test("t${k}", () => {})\n`)
  write(".github/workflows/ci.yml", "on: push\n")
  repo.gitAs({ GIT_AUTHOR_DATE: "@1712000000 +0000", GIT_COMMITTER_DATE: "@1712000000 +0000" }, "add", "-A")
  repo.gitAs(
    { GIT_AUTHOR_DATE: "@1712000000 +0000", GIT_COMMITTER_DATE: "@1712000000 +0000" },
    "commit",
    "-q",
    "-m",
    "Add the project files"
  )
  fs.appendFileSync(path.join(repo.dir, "dir01/f0001.txt"), "dirty\n")
  write("notes.txt", "untracked\n")
}

const bench: Bench = {
  name: "report",
  description: `ugent report without a model on a generated repository (${COMMITS} commits, ${FILES} files)`,
  run: async () => {
    if (!hasGit) throw new Error("the report benchmark needs the git binary on PATH")
    const repo = generatedRepo({ commits: COMMITS, files: FILES })
    const root = repo.dir
    try {
      decorate(repo)
      const rows: Array<Row> = []
      const sh = (script: string) => run("bash", ["-c", script], { cwd: root, maxBuffer: 512 * 1024 * 1024 })

      // One report, to learn the calls it makes (the blame windows) for the baselines.
      const first = await Effect.runPromise(Report.run({ root, save: false, server: { stores: "memory" } }))
      const calls = first.report.attribution.toolCalls
      const blames = calls
        .filter((c) => c.path === "world.tools.git.blame")
        .map((c) => JSON.parse(c.input) as { path: string; startLine: number; endLine: number })
      const blameArgs = blames.map((b) => ["blame", "--porcelain", "-L", `${b.startLine},${b.endLine}`, "--", b.path])
      const logArgs = [
        "log",
        "-n",
        "101",
        "-z",
        "--raw",
        "--numstat",
        "--diff-merges=first-parent",
        "--find-renames",
        "--format=%H%x1f%P%x1f%aN%x1f%aE%x1f%aI%x1f%cN%x1f%cI%x1f%B"
      ]
      const statusArgs = ["status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all"]
      const quoted = (args: ReadonlyArray<string>) => `git ${args.map((a) => `'${a}'`).join(" ")}`
      const blameCommands = blameArgs.map(quoted)
      const logCommand = quoted(logArgs)
      const statusCommand = quoted(statusArgs)
      const shellFacts = [
        "ls -la",
        statusCommand,
        "find . -path ./.git -prune -o -type f -printf '%T@ %p\\n' | sort -rn | head -10",
        "cat package.json",
        logCommand,
        "rg -n --no-heading -e '(?:^|//|#|/\\*|\\*|<!--|--|;)\\s*(TODO|FIXME)\\b' .",
        "find . -path ./.git -prune -o \\( -path '*/test/*' -o -name '*.test.*' -o -path './.github/workflows/*' \\) -print",
        "wc -l DEVLOG.md",
        "tail -n 500 DEVLOG.md",
        ...blameCommands
      ]
        .map((c) => `${c} > /dev/null`)
        .join("; ")

      const [b1, inProcess] = await pairedMs(
        () => sh(shellFacts),
        () => Effect.runPromise(Report.run({ root })),
        5
      )
      rows.push(
        row(`in process: Report.run (${calls.length} calls, SQLite audit, saved)`, b1, inProcess, "ms", {
          target: "ours ≤ 3000 ms",
          note: "baseline: the shell commands that gather the same facts"
        })
      )

      const [b2, cli] = await pairedMs(
        () => sh(shellFacts),
        () => run(process.execPath, [bin, "report", "--root", root, "--json"], { maxBuffer: 64 * 1024 * 1024 }),
        3
      )
      rows.push(
        row("CLI: ugent report --json (a new Node process)", b2, cli, "ms", {
          target: "ours ≤ 3000 ms",
          note: "baseline: the same shell commands"
        })
      )
      const [b3, start] = await pairedMs(
        () => sh("true"),
        () => run(process.execPath, [bin, "--version"]),
        3
      )
      rows.push(
        row("CLI start alone: ugent --version", b3, start, "ms", { note: "baseline: bash -c true; no report work" })
      )

      // The git facts: the report's git calls through the road, one after the other, against git's commands.
      const gitCalls = calls.filter((c) => c.path.startsWith("world.tools.git."))
      const road = ManagedRuntime.make(
        Server.layer({ root, stores: "memory", budgetTokens: Report.budgetTokens, loop: false })
      )
      try {
        const ours = () =>
          road.runPromise(
            Effect.forEach(gitCalls, (c) =>
              Effect.flatMap(Invoke.invoke({ path: c.path, input: JSON.parse(c.input), session: "bench" }), (o) =>
                o.ok ? Effect.void : Effect.die(new Error(`${c.path}: ${o.error.message}`))
              )
            )
          )
        const git = async () => {
          for (const args of [statusArgs, logArgs, ...blameArgs]) {
            await run("git", args, { cwd: root, maxBuffer: 512 * 1024 * 1024 })
          }
        }
        const [b4, gitOurs] = await pairedMs(git, ours, 7)
        rows.push(
          row(
            `git facts: status, log of 100 commits with files, ${blames.length} blame windows (through the road)`,
            b4,
            gitOurs,
            "ms",
            { target: "≤ 1.5", note: "one after the other, both sides" }
          )
        )
      } finally {
        await road.dispose()
      }
      return rows
    } finally {
      repo.dispose()
    }
  }
}

export default bench
