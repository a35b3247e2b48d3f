/**
 * Git writes over MCP, as an agent meets them through the official SDK
 * client, on canary repositories the test makes: a session writes a file,
 * stages and commits it, and gets `git status` back; a staged `.env` refuses
 * the commit, naming it; at L2 the person behind the client is asked before
 * each commit and is shown the message and the staged diff, and a denial
 * commits nothing.
 */
import { execFileSync } from "node:child_process"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { Server } from "@ugent/agentese"
import { Effect } from "effect"
import { failureOf, resultOf, workspace } from "./fixtures/connect.ts"
import { memoryClient } from "./fixtures/memory.ts"

const roots: Array<{ remove: () => void }> = []
afterAll(() => {
  for (const r of roots) r.remove()
})

/** A canary repository with a configured user and one commit. */
const repository = () => {
  const ws = workspace({ "README.md": "# canary\n" })
  roots.push(ws)
  const git = (...args: ReadonlyArray<string>) =>
    execFileSync("git", args, {
      cwd: ws.root,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: ws.root, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
    })
  git("init", "-q", "-b", "main")
  git("config", "user.name", "Ada Lovelace")
  git("config", "user.email", "ada@example.com")
  git("add", "README.md")
  git("commit", "-q", "-m", "Initial commit")
  return { root: ws.root, git }
}

describe("git writes over MCP", () => {
  it.effect("a session writes a file, stages and commits it, and gets git status back", () => {
    const repo = repository()
    return Effect.gen(function* () {
      const client = yield* memoryClient()
      const call = (name: string, args: Record<string, unknown>) =>
        Effect.map(client.callTool({ name, arguments: args }), (r) => resultOf(r))
      yield* call("world_tools_file_write", { path: "src/app.ts", content: "export const app = 1\n" })
      const added = yield* call("world_tools_git_add", { paths: ["src/app.ts"] })
      assert.deepStrictEqual((added.status as { staged: unknown }).staged, [{ path: "src/app.ts", status: "added" }])
      const done = yield* call("world_tools_git_commit", { message: 'Add the app; $(rm -rf ~) `stays` "text"' })
      const commit = done.commit as { hash: string; subject: string; branch: string }
      assert.strictEqual(commit.subject, 'Add the app; $(rm -rf ~) `stays` "text"')
      assert.strictEqual(commit.branch, "main")
      assert.strictEqual(repo.git("rev-parse", "HEAD").trim(), commit.hash)
      assert.strictEqual(repo.git("log", "-1", "--format=%s").trim(), 'Add the app; $(rm -rf ~) `stays` "text"')
      // git status after the commit, in the result: nothing left to commit.
      const status = done.status as { clean: boolean; branch: string }
      assert.isTrue(status.clean)
    }).pipe(Effect.scoped, Effect.provide(Server.layer({ root: repo.root, trust: 3, stores: "memory" })))
  })

  it.effect("a commit of a staged .env is refused, naming it; nothing is committed", () => {
    const repo = repository()
    return Effect.gen(function* () {
      const client = yield* memoryClient()
      const head = repo.git("rev-parse", "HEAD")
      yield* Effect.sync(() => {
        execFileSync("sh", ["-c", "printf 'TOKEN=canary\\n' > .env && echo change >> README.md"], { cwd: repo.root })
        repo.git("add", "-f", ".env", "README.md")
      })
      const failure = failureOf(
        yield* client.callTool({ name: "world_tools_git_commit", arguments: { message: "Everything" } })
      )
      assert.strictEqual(failure._tag, "GitWriteRefused")
      assert.strictEqual(failure.reason, "secret-staged")
      assert.deepStrictEqual(failure.names, [".env"])
      assert.include(failure.message, ".env")
      assert.strictEqual(repo.git("rev-parse", "HEAD"), head)
      // Nothing staged at all is refused too, with what to do next.
      repo.git("reset", "-q")
      const nothing = failureOf(
        yield* client.callTool({ name: "world_tools_git_commit", arguments: { message: "Nothing" } })
      )
      assert.strictEqual(nothing.reason, "nothing-staged")
      assert.include(nothing.message, "git.add")
    }).pipe(Effect.scoped, Effect.provide(Server.layer({ root: repo.root, trust: 3, stores: "memory" })))
  })

  it.effect("an L1 caller is offered the git reads but no git write", () => {
    const repo = repository()
    return Effect.gen(function* () {
      const client = yield* memoryClient()
      const names = (yield* client.listTools()).tools.map((t) => t.name)
      assert.include(names, "world_tools_git_status")
      for (const verb of ["add", "commit", "branch", "switch", "stash"])
        assert.notInclude(names, `world_tools_git_${verb}`)
    }).pipe(Effect.scoped, Effect.provide(Server.layer({ root: repo.root, trust: 1, stores: "memory" })))
  })

  it.effect(
    "at L2 each commit asks the person, showing the message and the staged diff; a denial commits nothing",
    () => {
      const repo = repository()
      return Effect.gen(function* () {
        const asked: Array<string> = []
        let answer = "deny"
        const client = yield* memoryClient({ capabilities: { elicitation: {} } })
        client.client.setRequestHandler(ElicitRequestSchema, async (request) => {
          asked.push(request.params.message)
          return { action: "accept", content: { answer } }
        })
        repo.git("rm", "-q", "--cached", "README.md")
        const head = repo.git("rev-parse", "HEAD")
        const denied = failureOf(
          yield* client.callTool({ name: "world_tools_git_commit", arguments: { message: "Stop tracking the README" } })
        )
        assert.strictEqual(denied._tag, "ApprovalDenied")
        assert.strictEqual(repo.git("rev-parse", "HEAD"), head)
        assert.strictEqual(asked.length, 1)
        assert.include(asked[0]!, "world.tools.git.commit")
        assert.include(asked[0]!, "Stop tracking the README")
        assert.include(asked[0]!, "-# canary")
        answer = "approve"
        const done = resultOf(
          yield* client.callTool({ name: "world_tools_git_commit", arguments: { message: "Stop tracking the README" } })
        )
        assert.strictEqual((done.commit as { subject: string }).subject, "Stop tracking the README")
        assert.notStrictEqual(repo.git("rev-parse", "HEAD"), head)
      }).pipe(Effect.scoped, Effect.provide(Server.layer({ root: repo.root, trust: 2, stores: "memory" })))
    }
  )
})
