/**
 * Threat 45 for the git tools: a FIFO planted in a repository (by the shell,
 * or carried by an unpacked archive) where a git tool, or git itself, opens a
 * file. A blocking `open` of `objects/info/alternates` or `commondir` froze
 * the event loop (no request answered, SIGTERM ignored), one of `config`
 * pinned a thread-pool worker for ever, and git waited on `.gitignore` until
 * the call timed out. Now a FIFO among git's own files is refused with a
 * typed error, and one among the working tree's ignore, attributes or
 * mailmap files is skipped, on both backends, at once, with the event loop
 * running throughout. A releaser opens the FIFOs' writing end after a few
 * seconds, so code that blocks fails the timing instead of hanging the run.
 */
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { GitDiff, GitLog, GitStatus } from "@ugent/tools"
import { Effect, Exit } from "effect"
import { mkfifo, releaser } from "../fifo.ts"
import { watched } from "../loop.ts"
import { backends, gitGate, layerFor, Repo, type Run } from "./fixtures.ts"

const gate = gitGate()

/** A workspace holding a repository in `sub`, with one commit, a change and an untracked file; removed with the scope. */
const workspace = Effect.acquireRelease(
  Effect.sync(() => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), "git-fifo-")))
    const repo = new Repo(path.join(root, "sub"))
    fs.mkdirSync(repo.dir)
    repo.git("init", "-q", "-b", "main")
    repo.write("a.txt", "one\n").write("d/b.txt", "two\n").commit("first")
    repo.write("a.txt", "one\nmore\n").write("d/new.txt", "new\n")
    return { root, repo }
  }),
  ({ root }) => Effect.sync(() => fs.rmSync(root, { recursive: true, force: true }))
)

/** Replaces `file` (under the repository) with a FIFO. */
const plant = (repo: Repo, file: string): string => {
  const at = path.join(repo.dir, file)
  fs.rmSync(at, { force: true })
  fs.mkdirSync(path.dirname(at), { recursive: true })
  mkfifo(at)
  return at
}

const calls: Readonly<Record<string, Run>> = {
  status: GitStatus.status.run({ repository: "sub" }),
  log: GitLog.log.run({ repository: "sub", includeDiff: true }),
  diff: GitDiff.diff.run({ repository: "sub" })
}

/** Runs each call under watch: it must answer at once, with the event loop running. */
const promptly = (root: string, backend: (typeof backends)[number]) =>
  Effect.forEach(Object.entries(calls), ([name, call]) =>
    Effect.map(watched(Effect.provide(call, layerFor(root, backend))), (w) => {
      assert.isBelow(w.millis, 4000, `${name}: it must answer at once, not wait on a FIFO`)
      assert.isBelow(w.maxPause, 2000, `${name}: the event loop must keep running`)
      return [name, w.exit] as const
    })
  )

describe.skipIf(gate.skip)(`threat 45: FIFOs planted in a repository${gate.note}`, () => {
  describe.each(backends)("%s backend", (backend) => {
    for (const file of [
      ".git/objects/info/alternates",
      ".git/commondir",
      ".git/config",
      ".git/HEAD",
      ".git/index",
      ".git/packed-refs",
      ".git/refs/heads/main",
      ".git/info/exclude"
    ]) {
      it.live(`threat 45: a FIFO at ${file} freezes nothing and is refused as not a file`, () =>
        Effect.gen(function* () {
          const { root, repo } = yield* workspace
          const fifo = plant(repo, file)
          yield* releaser([fifo], 8000)
          for (const [name, exit] of yield* promptly(root, backend)) {
            assert.isTrue(Exit.isFailure(exit), `${name} must fail`)
            if (Exit.isSuccess(exit)) continue
            const error = exit.cause.reasons.find((r) => r._tag === "Fail")
            assert.deepInclude(
              error?._tag === "Fail" ? error.error : {},
              { _tag: "NotARepository", reason: "not-a-file", part: file },
              `${name}: ${String(exit.cause)}`
            )
          }
        })
      )
    }

    it.live("threat 45: FIFOs as .gitignore, .gitattributes and .mailmap freeze nothing and are skipped", () =>
      Effect.gen(function* () {
        const { root, repo } = yield* workspace
        const fifos = [".gitignore", "d/.gitignore", ".gitattributes", "d/.gitattributes", ".mailmap"].map((f) =>
          plant(repo, f)
        )
        yield* releaser(fifos, 8000)
        const results = Object.fromEntries(yield* promptly(root, backend))
        for (const [name, exit] of Object.entries(results)) assert.isTrue(Exit.isSuccess(exit), `${name}: ${exit}`)
        const value = (name: string) => {
          const exit = results[name]
          return exit !== undefined && Exit.isSuccess(exit) ? (exit.value as Record<string, unknown>) : {}
        }
        assert.deepStrictEqual(value("status").untracked, ["d/new.txt"])
        assert.deepStrictEqual(
          (value("log").commits as ReadonlyArray<{ subject: string }>).map((c) => c.subject),
          ["first"]
        )
        assert.deepStrictEqual(
          (value("diff").files as ReadonlyArray<{ path: string }>).map((f) => f.path),
          ["a.txt"]
        )
      })
    )
  })
})
