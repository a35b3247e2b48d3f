/**
 * The parameter names the design documents give the read tools, through the
 * projections: `file.read` by `startLine`/`endLine` and a persona's
 * `maxLines`, `search.grep` over `paths` with `filePattern` and
 * `excludePatterns` and a column per match, `file.glob` with sizes, times
 * and `sortBy`, `git.log` with `since: "1 week ago"`. Each is called as an
 * MCP client (the official SDK) calls it, and read in the text its model
 * gets; the listings stay closed (`additionalProperties: false`).
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Recipe, Server } from "@ugent/agentese"
import { Effect } from "effect"
import { post, serve } from "../http/fixture.ts"
import { memoryClient } from "../mcp/fixtures/memory.ts"

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n") + "\n"

/** A temp workspace with `files`, removed with the scope. */
const tree = (files: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "ugent-names-"))
      for (const [name, content] of Object.entries(files)) {
        mkdirSync(join(root, name, ".."), { recursive: true })
        writeFileSync(join(root, name), content)
      }
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  )

type Content = ReadonlyArray<{ readonly type: string; readonly text: string }>

/** Calls a tool as an MCP client on a server over `root` (with `recipe`), and returns its text and structured result. */
const mcpCall = (root: string, name: string, args: Record<string, unknown>, recipe?: Recipe.Recipe) =>
  Effect.gen(function* () {
    const client = yield* memoryClient()
    const listed = (yield* client.listTools()).tools.find((t) => t.name === name)
    assert.strictEqual((listed!.inputSchema as { additionalProperties?: unknown }).additionalProperties, false)
    const result = yield* client.callTool({ name, arguments: args })
    return {
      isError: result.isError === true,
      text: (result.content as Content)[0]!.text,
      // biome-ignore lint/suspicious/noExplicitAny: the assertions check the shape
      structured: result.structuredContent as any
    }
  }).pipe(Effect.scoped, Effect.provide(Server.layer({ root, stores: "memory", ...(recipe ? { recipe } : {}) })))

describe("the documents' names for reading, through the projections", () => {
  it.effect("file.read takes startLine/endLine (1-based, inclusive) over MCP and HTTP", () =>
    Effect.gen(function* () {
      const root = yield* tree({ "a.txt": lines(10) })
      const r = yield* mcpCall(root, "world_tools_file_read", { path: "a.txt", startLine: 3, endLine: 5 })
      assert.isFalse(r.isError)
      assert.strictEqual(
        r.text.split("\n")[0],
        `a.txt: lines 3-5 of 10; more: world_tools_file_read {"path":"a.txt","offset":6}`
      )
      assert.include(r.text, "3\tline 3\n4\tline 4\n5\tline 5")
      assert.notInclude(r.text, "line 6")
      const { url } = yield* serve({ root })
      const h = yield* post(`${url}/v1/invoke/world.tools.file.read`, { path: "a.txt", startLine: 9, endLine: 10 })
      assert.strictEqual(h.status, 200)
      assert.deepStrictEqual([h.body.result.startLine, h.body.result.endLine], [9, 10])
    }).pipe(Effect.scoped)
  )

  it.effect("a persona's maxLines (its recipe's, or the shared profile's 500) bounds a read that names no end", () =>
    Effect.gen(function* () {
      const root = yield* tree({ "long.txt": lines(800) })
      const persona = yield* mcpCall(root, "world_tools_file_read", { path: "long.txt" }, { maxLines: 120 })
      assert.deepStrictEqual([persona.structured.endLine, persona.structured.nextOffset], [120, 121])
      // A call that names its end still gets it.
      const named = yield* mcpCall(root, "world_tools_file_read", { path: "long.txt", endLine: 300 }, { maxLines: 120 })
      assert.strictEqual(named.structured.endLine, 300)
      const shared = yield* mcpCall(root, "world_tools_file_read", { path: "long.txt" }, { profile: "shared" })
      assert.strictEqual(shared.structured.endLine, 500)
      const local = yield* mcpCall(root, "world_tools_file_read", { path: "long.txt" })
      assert.strictEqual(local.structured.endLine, 800)
    }).pipe(Effect.scoped)
  )

  // Live: "1 week ago" counts back from the machine's clock, as the git dates written here do.
  it.live('git.log takes since: "1 week ago" over MCP; text that is no date is refused, never handed to git', () =>
    Effect.gen(function* () {
      const root = yield* tree({ "a.txt": "one\n" })
      const git = (args: ReadonlyArray<string>, daysAgo: number) =>
        execFileSync("git", args, {
          cwd: root,
          env: {
            PATH: process.env.PATH ?? "",
            HOME: root,
            GIT_CONFIG_GLOBAL: "/dev/null",
            GIT_CONFIG_NOSYSTEM: "1",
            GIT_AUTHOR_NAME: "Ada",
            GIT_AUTHOR_EMAIL: "ada@example.com",
            GIT_COMMITTER_NAME: "Ada",
            GIT_COMMITTER_EMAIL: "ada@example.com",
            GIT_AUTHOR_DATE: `@${Math.floor(Date.now() / 1000) - daysAgo * 86_400} +0000`,
            GIT_COMMITTER_DATE: `@${Math.floor(Date.now() / 1000) - daysAgo * 86_400} +0000`
          }
        })
      git(["init", "-q", "-b", "main"], 0)
      git(["add", "a.txt"], 30)
      git(["commit", "-q", "-m", "old work"], 30)
      writeFileSync(join(root, "a.txt"), "two\n")
      git(["commit", "-q", "-am", "this week's work"], 1)
      const week = yield* mcpCall(root, "world_tools_git_log", { since: "1 week ago" })
      assert.isFalse(week.isError, week.text)
      assert.deepStrictEqual(
        week.structured.commits.map((c: { subject: string }) => c.subject),
        ["this week's work"]
      )
      assert.match(week.text, /^1 commit\n[0-9a-f]{7} .* Ada: this week's work/)
      const month = yield* mcpCall(root, "world_tools_git_log", { since: "2 months ago" })
      assert.strictEqual(month.structured.commits.length, 2)
      const bad = yield* mcpCall(root, "world_tools_git_log", { since: "1 week ago; touch pwned" })
      assert.isTrue(bad.isError)
      assert.include(bad.text, '"1 week ago"')
    }).pipe(Effect.scoped)
  )

  it.effect("file.glob gives each path its size and time, ordered by sortBy, over MCP and HTTP", () =>
    Effect.gen(function* () {
      const root = yield* tree({ "src/old.ts": "x".repeat(300), "src/new.ts": "y", "src/mid.ts": "zz", "notes.md": "" })
      const at = (s: number) => new Date(Date.UTC(2026, 4, 1, 12, 0, s))
      for (const [f, s] of [
        ["src/old.ts", 1],
        ["src/mid.ts", 2],
        ["src/new.ts", 3]
      ] as const) {
        utimesSync(join(root, f), at(s), at(s))
      }
      const r = yield* mcpCall(root, "world_tools_file_glob", { pattern: "**/*.ts", sortBy: "mtime" })
      assert.isFalse(r.isError, r.text)
      assert.strictEqual(
        r.text,
        [
          "3 files matched",
          "src/new.ts  (1 byte, 2026-05-01T12:00:03Z)",
          "src/mid.ts  (2 bytes, 2026-05-01T12:00:02Z)",
          "src/old.ts  (300 bytes, 2026-05-01T12:00:01Z)"
        ].join("\n")
      )
      assert.deepStrictEqual(r.structured.entries[2], {
        path: "src/old.ts",
        size: 300,
        modified: "2026-05-01T12:00:01.000Z"
      })
      const { url } = yield* serve({ root })
      const h = yield* post(`${url}/v1/invoke/world.tools.file.glob`, { pattern: "src/*.ts", sortBy: "size" })
      assert.deepStrictEqual(h.body.result.files, ["src/old.ts", "src/mid.ts", "src/new.ts"])
    }).pipe(Effect.scoped)
  )

  it.effect(
    "search.grep takes paths, filePattern and excludePatterns and shows each match's column, over MCP and HTTP",
    () =>
      Effect.gen(function* () {
        const root = yield* tree({
          "src/a.ts": "const x = 1 // TODO tidy\n",
          "src/a.test.ts": "// TODO test\n",
          "lib/b.ts": "  TODO: b\n",
          "lib/b.js": "TODO js\n",
          "docs/c.md": "TODO docs\n"
        })
        const r = yield* mcpCall(root, "world_tools_search_grep", {
          pattern: "TODO",
          paths: ["src", "lib"],
          filePattern: "*.ts",
          excludePatterns: ["*.test.ts"],
          outputMode: "content",
          context: 0
        })
        assert.isFalse(r.isError, r.text)
        assert.strictEqual(
          r.text,
          ["2 matches in 2 files", "src/a.ts", "1:16:const x = 1 // TODO tidy", "", "lib/b.ts", "1:3:  TODO: b"].join(
            "\n"
          )
        )
        assert.strictEqual(r.structured.matches[0].matches[0].column, 16)
        // Each of paths goes through the workspace check: a secret's name is refused whichever entry names it.
        const secret = yield* mcpCall(root, "world_tools_search_grep", { pattern: "x", paths: ["src", ".env"] })
        assert.isTrue(secret.isError)
        assert.include(secret.text, '".env" names a secret file')
        const outside = yield* mcpCall(root, "world_tools_search_grep", { pattern: "x", paths: ["src", "../"] })
        assert.isTrue(outside.isError)
        assert.include(outside.text, "OutsideWorkspace")
        const { url } = yield* serve({ root })
        const h = yield* post(`${url}/v1/invoke/world.tools.search.grep`, {
          pattern: "TODO",
          paths: ["docs", "lib"],
          excludePatterns: ["*.js"]
        })
        assert.deepStrictEqual(h.body.result.files, ["docs/c.md", "lib/b.ts"])
      }).pipe(Effect.scoped)
  )
})
