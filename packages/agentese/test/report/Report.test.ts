/**
 * `Report`: the Project Resurrection protocol without a model, on folders
 * and repositories made by the test (commits with known dates and authors,
 * markers, a DEVLOG, tests and CI, uncommitted work), a folder that is no
 * repository, an empty folder, a repository without commits, and a road that
 * refuses or budgets the calls. The attribution is checked against the
 * audit store's own records.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Report, Server } from "@ugent/agentese"
import { AuditStore } from "@ugent/wrappers"
import { Effect, Schema } from "effect"
import { emptyFolder, FIXME, folder, git, hasGit, repository, TODO, writeFiles } from "./fixture.ts"

const day = 86_400_000
const ageOf = (iso: string) => Math.floor((Date.now() - Date.parse(iso)) / day)

/** A report of `root` on a road of its own in memory, with the audit store's entries of the run. */
const reportOf = (root: string, options: Omit<Server.Options, "root"> = {}) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const report = yield* Report.make({ root })
      const audit = yield* AuditStore.AuditStore
      const entries = yield* audit.list({ limit: 10_000 })
      return { report, entries }
    }).pipe(Effect.provide(Server.layer({ root, stores: "memory", budgetTokens: Report.budgetTokens, ...options })))
  )

const devlog = (lines: number, last: string) =>
  `${Array.from({ length: lines - 1 }, (_, i) => (i % 50 === 0 ? `## Week ${i / 50 + 1}` : `- note ${i}`)).join("\n")}\n${last}\n`

/** A small project with a known history: four commits by two authors over a year and a half. */
const project = () =>
  repository([
    {
      date: "2023-01-10T10:00:00Z",
      message: "Start the project",
      files: {
        "package.json": JSON.stringify({
          name: "fixture",
          version: "0.3.0",
          description: "A project to resurrect",
          scripts: { test: "vitest run", build: "tsc" },
          dependencies: { effect: "^4.1.0" },
          devDependencies: { vitest: "^5.0.0" }
        }),
        "src/core/a.ts": `export const a = 1\n// ${TODO}: make this configurable\nexport const b = 2\n`,
        "README.md": "# fixture\n"
      }
    },
    {
      date: "2024-03-01T10:00:00Z",
      author: "Grace Hopper",
      message: "Add the API",
      files: {
        "src/core/a.ts": `export const a = 1\n// ${TODO}: make this configurable\nexport const b = 3\n`,
        "src/api/b.py": `def b():\n    # ${FIXME}: handle the empty case\n    return 1\n`
      }
    },
    {
      date: "2024-05-01T10:00:00Z",
      author: "Grace Hopper",
      message: "Fix the API",
      files: { "src/api/b.py": `def b():\n    # ${FIXME}: handle the empty case\n    return 2\n` }
    },
    {
      date: "2024-06-01T10:00:00Z",
      message: "Tests, CI and a DEVLOG",
      files: {
        "src/api/c.py": "def c():\n    return 3\n",
        "test/b.test.ts": "test('b', () => {})\n",
        ".github/workflows/ci.yml": "on: push\n",
        "DEVLOG.md": devlog(620, "- [ ] next: ship the API")
      }
    }
  ])

const frontMatterOf = (markdown: string) => {
  const [, front] = /^---\n([\s\S]*?)\n---\n/.exec(markdown) ?? []
  assert.isDefined(front, "the Markdown starts with front matter")
  return front!.split("\n")
}

describe("Report", () => {
  describe.skipIf(!hasGit)("a repository", () => {
    it("gathers structure, manifest, git state, areas, most-changed files, dated markers, the DEVLOG's tail, tests and CI", async () => {
      const root = project()
      writeFiles(root, { "README.md": "# fixture, edited\n", "notes.txt": "untracked\n" })
      const { report } = await reportOf(root)
      const facts = report.facts!

      assert.deepStrictEqual(facts.structure.projectTypes, [{ type: "node", file: "package.json" }])
      assert.strictEqual(facts.structure.empty, false)
      assert.deepStrictEqual(
        facts.structure.entries.filter((e) => e.isDir).map((e) => e.name),
        [".github", "src", "test"]
      )
      assert.strictEqual(facts.structure.files, 9)
      assert.deepInclude(facts.manifest!, {
        path: "package.json",
        name: "fixture",
        version: "0.3.0",
        dependencies: ["effect"],
        devDependencies: ["vitest"]
      })
      assert.deepStrictEqual(
        facts.manifest!.scripts.map((s) => s.name),
        ["build", "test"]
      )

      const g = facts.git
      assert.isTrue(g.available)
      if (!g.available) return
      assert.strictEqual(g.branch, "main")
      assert.deepStrictEqual([g.staged, g.unstaged, g.untracked, g.conflicted], [0, 1, 1, 0])
      assert.deepStrictEqual(g.changedPaths, ["README.md", "notes.txt"])
      assert.deepStrictEqual(
        g.commits.map((c) => [c.subject, c.author, c.date.slice(0, 10)]),
        [
          ["Tests, CI and a DEVLOG", "Ada Lovelace", "2024-06-01"],
          ["Fix the API", "Grace Hopper", "2024-05-01"],
          ["Add the API", "Grace Hopper", "2024-03-01"],
          ["Start the project", "Ada Lovelace", "2023-01-10"]
        ]
      )
      assert.deepStrictEqual(g.commits[1]!.areas, ["src/api"])
      assert.deepStrictEqual(g.areas[0], { area: "src/api", commits: 3, files: 2, lastDate: g.commits[0]!.date })
      assert.deepStrictEqual(
        g.mostChanged.slice(0, 2).map((f) => [f.path, f.commits]),
        [
          ["src/api/b.py", 2],
          ["src/core/a.ts", 2]
        ]
      )

      const todos = facts.todos
      assert.strictEqual(todos.found, 2)
      const todo = todos.items.find((t) => t.path === "src/core/a.ts")!
      assert.deepInclude(todo, { line: 2, kind: "TODO", blamed: true })
      assert.strictEqual(todo.commit?.author, "Ada Lovelace")
      assert.strictEqual(todo.commit?.date.slice(0, 10), "2023-01-10")
      assert.closeTo(todo.ageDays!, ageOf("2023-01-10T10:00:00Z"), 1)
      const fixme = todos.items.find((t) => t.path === "src/api/b.py")!
      assert.deepInclude(fixme, { line: 2, kind: "FIXME" })
      assert.strictEqual(fixme.commit?.author, "Grace Hopper")
      assert.strictEqual(fixme.commit?.date.slice(0, 10), "2024-03-01")

      assert.deepInclude(facts.devlog!, { path: "DEVLOG.md", totalLines: 620, from: 121, to: 620 })
      assert.deepStrictEqual(facts.devlog!.openItems, ["- [ ] next: ship the API"])
      assert.strictEqual(facts.devlog!.headings.at(-1), "## Week 13")

      assert.deepInclude(facts.checks, { testFiles: 1, ciFiles: [".github/workflows/ci.yml"] })
      assert.deepStrictEqual(facts.checks.ciSystems, ["GitHub Actions"])
      assert.deepStrictEqual(facts.unavailable, [])

      assert.deepStrictEqual(
        report.attribution.filesRead.map((f) => [f.path, f.via, f.lines]),
        [
          ["package.json", "world.tools.file.read", undefined],
          ["DEVLOG.md", "world.tools.file.read", { from: 121, to: 620 }],
          ["src/api/b.py", "world.tools.git.blame", { from: 2, to: 2 }],
          ["src/core/a.ts", "world.tools.git.blame", { from: 2, to: 2 }]
        ]
      )
    })

    it("writes the four sections from the facts: where the work was, its state, what to do first", async () => {
      const root = project()
      writeFiles(root, { "README.md": "# fixture, edited\n" })
      const { report } = await reportOf(root)
      assert.strictEqual(report.project, "fixture")
      assert.strictEqual(report.mode, "deterministic")
      assert.match(
        report.lastActiveArea.summary,
        /^Recent work \(4 commits, 2023-01-10 to 2024-06-01\) was mostly in `src\/api`/
      )
      assert.match(report.lastActiveArea.summary, /the last commit was .*“Tests, CI and a DEVLOG”/)
      assert.include(
        report.lastActiveArea.points.join("\n"),
        "The DEVLOG (`DEVLOG.md`, 620 lines) ends under “Week 13”"
      )
      assert.match(
        report.currentState.summary,
        /^`fixture` 0\.3\.0: a node project, 8 files in .*On branch `main`, with 1 uncommitted change\. Dormant: the last commit was/
      )
      const steps = report.nextSteps.points
      assert.match(steps[0]!, /^Review the uncommitted work on `main` \(`README\.md`\)/)
      assert.match(steps[1]!, /^Pick up where the DEVLOG leaves off: “next: ship the API”/)
      assert.match(steps[2]!, /^Check the dependencies still install \(`npm install`\)/)
      assert.match(steps[3]!, /^Run the tests \(`npm test`\)/)
      assert.match(
        steps.join("\n"),
        /Triage the oldest TODO\/FIXME markers: `src\/core\/a\.ts:2` \(\d+ years ago\), `src\/api\/b\.py:2`/
      )
      assert.notInclude(steps.join("\n"), "Add CI")
      assert.match(
        report.basedOn.summary,
        /^11 tool calls through the road in session `report-[0-9a-f-]+`; 4 files read\.$/
      )
    })

    it("makes at most 15 calls, every one through the road in one session, and the attribution is the audit store's record", async () => {
      const root = project()
      const { report, entries } = await reportOf(root)
      const calls = report.attribution.toolCalls
      assert.isAtMost(calls.length, 15)
      assert.deepStrictEqual(
        calls.map((c) => c.path),
        [
          "world.tools.file.list",
          "world.tools.git.status",
          "world.tools.file.glob",
          "world.tools.file.read",
          "world.tools.git.log",
          "world.tools.search.grep",
          "world.tools.file.glob",
          "world.tools.file.read",
          "world.tools.file.read",
          "world.tools.git.blame",
          "world.tools.git.blame"
        ]
      )
      assert.isTrue(calls.every((c) => c.ok))
      // Exactly these calls were made, each with a record before and after it, and the same input summary.
      assert.strictEqual(entries.length, calls.length * 2)
      for (const call of calls) {
        const mine = entries.filter((e) => e.callId === call.callId)
        assert.deepStrictEqual(mine.map((e) => e.phase).sort(), ["after", "before"], call.path)
        for (const e of mine) {
          assert.strictEqual(e.path, call.path)
          assert.strictEqual(e.inputSummary, call.input)
          assert.strictEqual(e.observerId, "local")
        }
        assert.strictEqual(mine.find((e) => e.phase === "after")!.status, "success")
      }
      const front = frontMatterOf(Report.markdown(report))
      for (const call of calls) {
        const line = front.slice(front.indexOf("  toolCalls:")).find((l) => l.includes(call.callId))
        assert.isDefined(line, call.callId)
        // Every list item of the front matter is JSON (and so YAML).
        assert.deepStrictEqual(JSON.parse(line!.replace(/^\s+- /, "")), call)
      }
    })

    it("Report.run keeps the audit records in the workspace's SQLite store and saves Markdown and JSON under .ugent/reports", async () => {
      const root = project()
      const { report, saved } = await Effect.runPromise(Report.run({ root }))
      assert.isDefined(saved)
      const json = Schema.decodeUnknownSync(Report.Report)(JSON.parse(readFileSync(saved!.json, "utf8")))
      assert.deepStrictEqual(json, report)
      assert.strictEqual(readFileSync(saved!.markdown, "utf8"), Report.markdown(report))
      assert.strictEqual(readFileSync(join(root, ".ugent", "reports", "latest.md"), "utf8"), Report.markdown(report))
      assert.strictEqual(readFileSync(join(root, ".ugent", ".gitignore"), "utf8"), "*\n")
      // The saved report does not dirty the repository.
      assert.strictEqual(git(root, ["status", "--porcelain"]), "")
      const entries = await Effect.runPromise(
        Effect.flatMap(AuditStore.AuditStore, (s) => s.list({ limit: 1000, observerId: "report" })).pipe(
          Effect.provide(AuditStore.layerSqlite({ workspace: root }))
        )
      )
      assert.deepStrictEqual(
        new Set(entries.map((e) => e.callId)),
        new Set(report.attribution.toolCalls.map((c) => c.callId))
      )
    })

    it("dates at most six windows of markers by blame and says how many it left", async () => {
      const files: Record<string, string> = {}
      for (let i = 0; i < 9; i++) files[`src/m${i}.ts`] = `// ${TODO}: item ${i}\n`
      files["src/long.ts"] = `// ${TODO}: first\n${"x\n".repeat(100)}// ${FIXME}: far below\n`
      const root = repository([{ date: "2024-01-01T00:00:00Z", message: "Markers", files }])
      const { report } = await reportOf(root)
      const blames = report.attribution.toolCalls.filter((c) => c.path === "world.tools.git.blame")
      assert.strictEqual(blames.length, 6)
      assert.strictEqual(report.facts!.todos.found, 11)
      assert.strictEqual(report.facts!.todos.items.filter((t) => t.blamed).length, 6)
      assert.strictEqual(
        report.facts!.todos.note,
        "5 more groups of markers were not blamed (the report makes at most 6 blame calls)"
      )
    })

    it("a repository with no commits: the state says so, and the first step is the first commit", async () => {
      const root = repository([])
      writeFiles(root, { "main.go": "package main\n", "go.mod": "module example.com/m\n\ngo 1.22\n" })
      const { report } = await reportOf(root)
      const g = report.facts!.git
      assert.isTrue(g.available && g.noCommits)
      assert.deepStrictEqual(report.facts!.manifest?.name, "example.com/m")
      assert.notInclude(
        report.attribution.toolCalls.map((c) => c.path),
        "world.tools.git.log"
      )
      assert.include(report.currentState.summary, "A git repository with no commits yet (branch `main`).")
      assert.include(report.nextSteps.points, "Make the first commit: the repository has none yet")
    })
  })

  describe("a folder that is not a repository", () => {
    it("still reports structure and manifest, and says git facts are unavailable", async () => {
      const root = folder({
        "Cargo.toml": '[package]\nname = "crab"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n',
        "src/main.rs": `fn main() {}\n// ${TODO}: parse arguments\n`,
        "tests/cli.rs": "#[test]\nfn t() {}\n"
      })
      const { report } = await reportOf(root)
      const facts = report.facts!
      assert.deepStrictEqual(facts.git, {
        available: false,
        reason:
          "No git repository at .: there is no .git there. Git tools read the repository at the workspace root (or the sub-directory given as `repository`) and never search parent directories or create one. Check the path with file.list.",
        noRepository: true
      })
      assert.deepInclude(facts.manifest!, { type: "rust", name: "crab", version: "0.1.0", dependencies: ["serde"] })
      assert.strictEqual(facts.todos.found, 1)
      assert.isFalse(facts.todos.items[0]!.blamed)
      assert.strictEqual(facts.checks.testFiles, 1)
      const paths = report.attribution.toolCalls.map((c) => c.path)
      assert.notInclude(paths, "world.tools.git.log")
      assert.notInclude(paths, "world.tools.git.blame")
      assert.include(
        report.currentState.summary,
        "Git facts are unavailable: No git repository at .: there is no .git there."
      )
      assert.match(
        report.lastActiveArea.summary,
        /^No commit history to go by; the most recently modified files are in/
      )
      assert.include(report.nextSteps.points.join("\n"), "Run the tests (`cargo test`)")
      assert.include(
        report.nextSteps.points,
        "Put the folder under version control (`git init`) so the next report can read its history"
      )
      assert.include(report.nextSteps.points, "Add CI that runs the tests on every push: no CI configuration was found")
    })
  })

  describe("for a newcomer", () => {
    it("opens with what the project is and how to start it, and skips markers inside a test's strings", async () => {
      const root = folder({
        "package.json": JSON.stringify({
          name: "teapot",
          description: "Brews tea over HTTP",
          scripts: { start: "node server.js", test: "vitest run" }
        }),
        "src/a.ts": `// ${TODO}: real marker\nexport const a = 1\n`,
        "test/a.test.ts": `const files = { "b.ts": "// ${TODO}: fixture data\\n", 'c.ts': '# ${FIXME}: also data' }\n`
      })
      const { report } = await reportOf(root)
      assert.strictEqual(
        report.about,
        "teapot: Brews tea over HTTP. To start: `npm install`, then `npm start`; the tests: `npm test`."
      )
      assert.match(
        Report.body(report),
        /^# teapot: project report\n\nProject Resurrection · [^\n]*\n\nteapot: Brews tea/
      )
      assert.deepStrictEqual(
        report.facts!.todos.items.map((t) => t.path),
        ["src/a.ts"]
      )
      const rust = await reportOf(folder({ "Cargo.toml": '[package]\nname = "crab"\nversion = "0.1.0"\n' }))
      assert.strictEqual(rust.report.about, "crab is a rust project. To start: `cargo build`; the tests: `cargo test`.")
    })
  })

  describe("an empty folder", () => {
    it("gives a short, honest report after two calls", async () => {
      const root = emptyFolder()
      const { report, entries } = await reportOf(root)
      assert.isTrue(report.facts!.structure.empty)
      assert.deepStrictEqual(
        report.attribution.toolCalls.map((c) => [c.path, c.ok]),
        [
          ["world.tools.file.list", true],
          ["world.tools.git.status", false]
        ]
      )
      assert.strictEqual(entries.length, 4)
      assert.strictEqual(report.lastActiveArea.summary, "Nothing: the folder is empty.")
      assert.strictEqual(
        report.currentState.summary,
        "The folder is empty: no files, no manifest, and no git repository."
      )
      assert.strictEqual(
        report.nextSteps.summary,
        "There is nothing to resume: start the project, or point the report at another folder."
      )
      assert.isBelow(Report.body(report).split("\n").length, 30)
    })
  })

  describe("the road decides", () => {
    it("a call the recipe refuses is attributed with its refusal, and the fact is unavailable", async () => {
      const root = folder({ "package.json": JSON.stringify({ name: "x" }), "a.ts": `// ${TODO}: a\n` })
      const { report, entries } = await reportOf(root, { recipe: { deny: ["world.tools.search.*"] } })
      const grep = report.attribution.toolCalls.find((c) => c.path === "world.tools.search.grep")!
      assert.isFalse(grep.ok)
      assert.deepInclude(grep.error!, { tag: "PolicyDenied", kind: "denied" })
      assert.isFalse(report.facts!.todos.searched)
      assert.isTrue(report.facts!.unavailable.some((u) => u.startsWith("world.tools.search.grep failed:")))
      const after = entries.find((e) => e.callId === grep.callId && e.phase === "after")!
      assert.strictEqual(after.status, "failure")
      assert.strictEqual(after.error?.tag, "PolicyDenied")
    })

    it("a result over the road's budget is a fact unavailable, not a failure of the report", async () => {
      const root = folder({ "package.json": JSON.stringify({ name: "x", description: "y".repeat(2000) }) })
      const { report } = await reportOf(root, { budgetTokens: 100 })
      assert.isNull(report.facts!.manifest)
      assert.isTrue(
        report.facts!.unavailable.some((u) =>
          u.startsWith("world.tools.file.read returned more than the road's result budget (kept in working memory as")
        )
      )
    })
  })
})
