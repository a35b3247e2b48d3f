/**
 * The git tools' behaviour on both backends: repository states (empty,
 * detached, conflicted), typed errors and their messages, truncation
 * metadata, redaction of blocked names, input checks, the isomorphic cache
 * across changes, and backend selection.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Trust } from "@ugent/core"
import { GitBackend, GitBlame, GitDiff, GitLog, GitShow, GitStatus, Workspace } from "@ugent/tools"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import {
  backends,
  conflictRepo,
  failureWith,
  generatedRepo,
  gitGate,
  hasGit,
  historyRepo,
  Repo,
  type Run,
  runWith,
  workingChanges
} from "./fixtures.ts"

const gate = gitGate()

describe.skipIf(gate.skip)(`git tools${gate.note}`, () => {
  let history: Repo
  let working: Repo
  beforeAll(() => {
    history = historyRepo()
    working = workingChanges(historyRepo())
  })
  afterAll(() => {
    history.dispose()
    working.dispose()
  })

  describe.each(backends)("%s backend", (backend) => {
    describe("an empty repository", () => {
      let empty: Repo
      beforeAll(() => {
        empty = Repo.create("git-empty-")
        empty.write("first.txt", "one\ntwo\n")
        empty.git("add", "first.txt")
        empty.write("loose.txt", "untracked\n")
      })
      afterAll(() => empty.dispose())

      it("git.status reports no commits, the unborn branch and what is staged", async () => {
        const out = await runWith(empty.dir, backend, GitStatus.status.run({}))
        expect(out).toMatchObject({
          branch: "main",
          detached: false,
          head: null,
          noCommits: true,
          clean: false,
          staged: [{ path: "first.txt", status: "added" }],
          untracked: ["loose.txt"]
        })
      })

      it("git.log returns no commits", async () => {
        expect(await runWith(empty.dir, backend, GitLog.log.run({}))).toEqual({ commits: [], truncated: false })
      })

      it("git.diff compares with the empty tree", async () => {
        const out = await runWith(empty.dir, backend, GitDiff.diff.run({}))
        expect(out.base).toBeNull()
        expect(out.files.map((f) => [f.status, f.path, f.additions])).toEqual([["added", "first.txt", 2]])
      })

      it("git.blame, git.show and an explicit HEAD fail with no-commits", async () => {
        const runs: ReadonlyArray<Run> = [
          GitBlame.blame.run({ path: "first.txt" }),
          GitShow.show.run({}),
          GitDiff.diff.run({ base: "HEAD" })
        ]
        for (const run of runs) {
          const e = await failureWith(empty.dir, backend, run)
          expect(e).toMatchObject({ _tag: "UnknownRevision", reason: "no-commits" })
          expect(e.message).toContain("no commits yet")
        }
      })
    })

    describe("repository states", () => {
      it("reports a detached HEAD with its commit", async () => {
        const r = historyRepo()
        try {
          r.git("checkout", "-q", "--detach", "HEAD~3")
          const out = await runWith(r.dir, backend, GitStatus.status.run({}))
          expect(out).toMatchObject({ branch: null, detached: true, head: r.head(), clean: true })
          const log = await runWith(r.dir, backend, GitLog.log.run({ limit: 1 }))
          expect(log.commits[0]?.hash).toBe(r.head())
        } finally {
          r.dispose()
        }
      })

      it("reports conflicted files apart from staged and unstaged ones", async () => {
        const r = conflictRepo()
        try {
          const out = await runWith(r.dir, backend, GitStatus.status.run({}))
          expect(out.conflicted).toEqual(["shared.txt"])
          expect([...out.staged, ...out.unstaged].map((c) => c.path)).not.toContain("shared.txt")
          expect(out.clean).toBe(false)
        } finally {
          r.dispose()
        }
      })

      it("shows a merge with both parents and what it brought to the first", async () => {
        const merge = history.git("log", "--merges", "-1", "--format=%H").trim()
        const out = await runWith(history.dir, backend, GitShow.show.run({ rev: merge }))
        expect(out.commit.parents).toHaveLength(2)
        expect(out.diff?.files.map((f) => `${f.status} ${f.path}`)).toEqual([
          "added feature.txt",
          "modified src/main.ts"
        ])
      })

      it("flags binary files and counts no lines for them", async () => {
        const out = await runWith(
          history.dir,
          backend,
          GitDiff.diff.run({ base: "HEAD~30", compare: "HEAD", paths: ["assets"] })
        )
        expect(out.files).toEqual([
          { path: "assets/logo.bin", status: "modified", binary: true, additions: 0, deletions: 0, hunks: [] }
        ])
      })

      it("handles unicode and space-containing names", async () => {
        const log = await runWith(history.dir, backend, GitLog.log.run({ path: "with space.txt" }))
        expect(log.commits.map((c) => c.subject)).toEqual([
          "Binary change, deletion, script and link",
          "Initial commit"
        ])
        const root = history.git("rev-list", "--max-parents=0", "HEAD").trim()
        const shown = await runWith(history.dir, backend, GitShow.show.run({ rev: root, paths: ["日本語"] }))
        expect(shown.diff?.files.map((f) => `${f.status} ${f.path}`)).toEqual(["added 日本語/ファイル.md"])
        const blame = await runWith(history.dir, backend, GitBlame.blame.run({ path: "naïve café.txt", rev: "HEAD" }))
        expect(blame.lines.map((l) => l.text)).toEqual(["unicode name"])
      })

      it("leaves out files whose stat data is stale but whose content is unchanged, and gives their hunks to no other file", async () => {
        const r = historyRepo()
        try {
          // git lists such files in --raw (it does not refresh the index, and must not write it), with no numstat or patch.
          const future = new Date(Date.now() + 60_000)
          for (const f of ["README.md", "src/helpers.ts"]) fs.utimesSync(path.join(r.dir, f), future, future)
          r.write("src/main.ts", `${r.read("src/main.ts")}// dirty\n`)
          const out = await runWith(r.dir, backend, GitDiff.diff.run({}))
          expect(
            out.files.map((f) => [
              f.path,
              f.additions,
              f.hunks.flatMap((h) => h.lines.filter((l) => l.type === "add").map((l) => l.content))
            ])
          ).toEqual([["src/main.ts", 1, ["// dirty"]]])
          expect(out.stats).toEqual({ filesChanged: 1, additions: 1, deletions: 0 })
        } finally {
          r.dispose()
        }
      })

      it("reports files deleted in the working tree", async () => {
        const out = await runWith(working.dir, backend, GitDiff.diff.run({ paths: ["crlf.txt"] }))
        expect(out.files).toMatchObject([{ path: "crlf.txt", status: "deleted", deletions: 3, additions: 0 }])
        expect(out.files[0]?.hunks[0]?.lines[0]).toEqual({ type: "delete", content: "one\r", oldLine: 1 })
      })
    })

    describe("typed errors", () => {
      it("UnknownRevision names the revision and says what to do", async () => {
        for (const rev of ["no-such-branch", "HEAD~999", "deadbeef", "main^3"]) {
          const runs: ReadonlyArray<Run> = [
            GitLog.log.run({ rev }),
            GitDiff.diff.run({ base: rev }),
            GitDiff.diff.run({ base: "HEAD", compare: rev }),
            GitBlame.blame.run({ path: "README.md", rev }),
            GitShow.show.run({ rev })
          ]
          for (const run of runs) {
            const e = await failureWith(history.dir, backend, run)
            expect(e, rev).toMatchObject({ _tag: "UnknownRevision", revision: rev, reason: "unknown" })
            expect(e.message).toContain("git.log")
          }
        }
      })

      it("PathNotInRepository says whether the file is untracked or absent from the revision", async () => {
        const untracked = await failureWith(working.dir, backend, GitBlame.blame.run({ path: "untracked.txt" }))
        expect(untracked).toMatchObject({ _tag: "PathNotInRepository", reason: "not-tracked" })
        const old = await failureWith(history.dir, backend, GitBlame.blame.run({ path: "src/long.ts", rev: "HEAD~30" }))
        expect(old).toMatchObject({ _tag: "PathNotInRepository", reason: "not-in-revision", revision: "HEAD~30" })
        const dir = await failureWith(history.dir, backend, GitBlame.blame.run({ path: "src", rev: "HEAD" }))
        expect(dir).toMatchObject({ _tag: "PathNotInRepository" })
      })

      it("InvalidInput for out-of-range options, and 0 is a value, not a default", async () => {
        const bad: ReadonlyArray<Run> = [
          GitLog.log.run({ limit: 0 }),
          GitLog.log.run({ limit: 101 }),
          GitLog.log.run({ since: "last tuesday-ish" }),
          GitLog.log.run({ author: "a\nb" }),
          GitDiff.diff.run({ contextLines: -1 }),
          GitDiff.diff.run({ staged: true, compare: "HEAD" }),
          GitBlame.blame.run({ path: "README.md", startLine: 5, endLine: 2 }),
          GitStatus.status.run({ limit: 1.5 })
        ]
        for (const run of bad) {
          expect(await failureWith(history.dir, backend, run)).toMatchObject({ _tag: "InvalidInput" })
        }
        const zero = await runWith(
          history.dir,
          backend,
          GitDiff.diff.run({ base: "HEAD~2", compare: "HEAD", maxDiffSize: 0 })
        )
        expect(zero.files.every((f) => f.hunks.length === 0)).toBe(true)
        expect(zero.truncated).toBe(true)
        const zeroLog = await runWith(
          history.dir,
          backend,
          GitLog.log.run({ limit: 2, includeDiff: true, maxDiffSize: 0 })
        )
        const logged = zeroLog.commits.flatMap((c) => c.diff?.files ?? [])
        expect(logged.length).toBeGreaterThan(0)
        for (const f of logged) {
          expect(f.hunks).toEqual([])
          expect(f.truncated === true).toBe(!f.binary && f.additions + f.deletions > 0)
        }
        const noContext = await runWith(
          history.dir,
          backend,
          GitDiff.diff.run({ base: "HEAD~1", compare: "HEAD", contextLines: 0 })
        )
        expect(noContext.files[0]?.hunks.every((h) => h.lines.every((l) => l.type !== "context"))).toBe(true)
      })
    })

    describe("relative dates", () => {
      it('git.log reads since/until as the documents write them ("1 week ago") into the instant an ISO date names', async () => {
        const all = await runWith(history.dir, backend, GitLog.log.run({ limit: 100 }))
        const newest = Date.parse(all.commits[0]!.committerDate)
        // Now is 30 minutes after the newest commit, on a test clock.
        const at = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.andThen(TestClock.setTime(newest + 30 * 60_000), effect).pipe(Effect.provide(TestClock.layer()))
        const iso = (minutesBack: number) => new Date(newest + 30 * 60_000 - minutesBack * 60_000).toISOString()
        const hashes = (o: GitLog.Output) => o.commits.map((c) => c.hash)
        const cases: ReadonlyArray<readonly [Partial<GitLog.Input>, Partial<GitLog.Input>]> = [
          [{ since: "1 hour ago" }, { since: iso(60) }],
          [{ since: "45 minutes ago" }, { since: iso(45) }],
          [
            { since: "an hour ago", until: "40 mins ago" },
            { since: iso(60), until: iso(40) }
          ],
          [{ since: "1 week ago" }, { since: iso(7 * 24 * 60) }],
          [{ since: "yesterday" }, { since: iso(24 * 60) }],
          [{ until: "2 weeks ago" }, { until: iso(14 * 24 * 60) }]
        ]
        for (const [relative, absolute] of cases) {
          const a = await runWith(history.dir, backend, at(GitLog.log.run({ limit: 100, ...relative })))
          const b = await runWith(history.dir, backend, GitLog.log.run({ limit: 100, ...absolute }))
          expect(hashes(a), JSON.stringify(relative)).toEqual(hashes(b))
        }
        const hour = await runWith(history.dir, backend, at(GitLog.log.run({ limit: 100, since: "1 hour ago" })))
        expect(hour.commits.length).toBeGreaterThan(0)
        expect(hour.commits.length).toBeLessThan(all.commits.length)
        const bad = await failureWith(history.dir, backend, GitLog.log.run({ since: "a while ago" }))
        expect(bad).toMatchObject({ _tag: "InvalidInput" })
        expect((bad as { message: string }).message).toContain('"1 week ago"')
      })
    })

    describe("truncation", () => {
      it("git.log says when more commits matched than the limit", async () => {
        const few = await runWith(history.dir, backend, GitLog.log.run({ limit: 3 }))
        expect(few.commits).toHaveLength(3)
        expect(few.truncated).toBe(true)
        const all = await runWith(history.dir, backend, GitLog.log.run({ limit: 100 }))
        expect(all.truncated).toBe(false)
        expect(all.commits).toHaveLength(Number(history.git("rev-list", "--count", "HEAD").trim()))
      })

      it("git.status lists at most limit files and counts them all", async () => {
        const out = await runWith(working.dir, backend, GitStatus.status.run({ limit: 2 }))
        expect(out.staged.length + out.unstaged.length + out.untracked.length).toBe(2)
        expect(out.truncated).toBe(true)
        expect(out.totals).toEqual({ staged: 5, unstaged: 3, untracked: 2, conflicted: 0 })
      })

      it("git.diff stops admitting hunks at maxDiffSize and keeps every statistic", async () => {
        const full = await runWith(
          history.dir,
          backend,
          GitDiff.diff.run({
            base: history.git("rev-list", "--max-parents=0", "HEAD").trim(),
            compare: "HEAD",
            maxDiffSize: 10_000_000
          })
        )
        const capped = await runWith(
          history.dir,
          backend,
          GitDiff.diff.run({
            base: history.git("rev-list", "--max-parents=0", "HEAD").trim(),
            compare: "HEAD",
            maxDiffSize: 600
          })
        )
        expect(capped.truncated).toBe(true)
        expect(capped.stats).toEqual(full.stats)
        const bytes = capped.files
          .flatMap((f) => f.hunks.flatMap((h) => h.lines))
          .reduce((n, l) => n + Buffer.byteLength(l.content) + 1, 0)
        expect(bytes).toBeLessThanOrEqual(600)
        expect(capped.files.some((f) => f.truncated === true)).toBe(true)
        const firstCut = capped.files.findIndex((f) => f.truncated === true)
        expect(capped.files.slice(firstCut + 1).every((f) => f.hunks.length === 0)).toBe(true)
      })

      it("git.diff lists at most maxFiles files", async () => {
        const out = await runWith(
          history.dir,
          backend,
          GitDiff.diff.run({
            base: history.git("rev-list", "--max-parents=0", "HEAD").trim(),
            compare: "HEAD",
            maxFiles: 2
          })
        )
        expect(out.files).toHaveLength(2)
        expect(out.omittedFiles).toBe(out.stats.filesChanged - 2)
        expect(out.truncated).toBe(true)
      })

      it("git.blame pages through a file with maxLines and nextLine", async () => {
        const first = await runWith(history.dir, backend, GitBlame.blame.run({ path: "src/long.ts", maxLines: 15 }))
        expect(first.lines.map((l) => l.line)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1))
        expect(first).toMatchObject({ truncated: true, nextLine: 16 })
        const rest = await runWith(
          history.dir,
          backend,
          GitBlame.blame.run({ path: "src/long.ts", startLine: 16, maxLines: 100 })
        )
        expect(rest.truncated).toBe(false)
        expect(rest.lines.map((l) => l.line)).toEqual(Array.from({ length: 25 }, (_, i) => i + 16))
        const beyond = await runWith(history.dir, backend, GitBlame.blame.run({ path: "src/long.ts", startLine: 500 }))
        expect(beyond.lines).toEqual([])
      })
    })

    describe("blocked names", () => {
      let secret: Repo
      beforeAll(() => {
        secret = Repo.create("git-secret-")
        secret.write(".env", "API_KEY=sk-live-123\n").write("app.ts", "export {}\n").commit("config")
        secret.write(".env", "API_KEY=sk-live-456\n").write("app.ts", "export const x = 1\n").commit("rotate")
      })
      afterAll(() => secret.dispose())

      it("never shows their content in diffs, but keeps their statistics", async () => {
        const runs: ReadonlyArray<Run> = [
          GitDiff.diff.run({ base: "HEAD~1", compare: "HEAD" }),
          GitShow.show.run({}),
          GitLog.log.run({ includeDiff: true })
        ]
        for (const run of runs) {
          const out = await runWith(secret.dir, backend, run)
          const text = JSON.stringify(out)
          expect(text).not.toContain("sk-live")
          expect(text).toContain('"redacted":true')
        }
        const out = await runWith(secret.dir, backend, GitDiff.diff.run({ base: "HEAD~1", compare: "HEAD" }))
        expect(out.files.find((f) => f.path === ".env")).toMatchObject({
          additions: 1,
          deletions: 1,
          hunks: [],
          redacted: true
        })
      })

      it("refuses to blame them", async () => {
        const e = await failureWith(secret.dir, backend, GitBlame.blame.run({ path: ".env", rev: "HEAD" }))
        expect(e).toMatchObject({ _tag: "BlockedPath" })
      })
    })

    it("sees new commits, index changes and repacks between calls", async () => {
      const r = historyRepo()
      try {
        const layer = Layer.mergeAll(
          Workspace.layer({ root: r.dir }).pipe(Layer.orDie),
          backend === "native" ? GitBackend.layerNative : GitBackend.layerIsomorphic,
          Trust.grant(0)
        )
        await Effect.runPromise(
          Effect.gen(function* () {
            const before = yield* GitLog.log.run({ limit: 1 })
            r.write("later.txt", "later\n").commit("A later commit")
            const after = yield* GitLog.log.run({ limit: 1 })
            expect(after.commits[0]?.subject).toBe("A later commit")
            expect(after.commits[0]?.parents).toEqual([before.commits[0]?.hash])
            r.write("staged.txt", "s\n")
            r.git("add", "staged.txt")
            expect((yield* GitStatus.status.run({})).staged).toEqual([{ path: "staged.txt", status: "added" }])
            r.git("gc", "-q", "--prune=now")
            const repacked = yield* GitLog.log.run({ limit: 100 })
            expect(repacked.commits).toHaveLength(Number(r.git("rev-list", "--count", "HEAD").trim()))
          }).pipe(Effect.provide(layer))
        )
      } finally {
        r.dispose()
      }
    })
  })

  describe("both backends", () => {
    it("agree on truncated results", async () => {
      const inputs: ReadonlyArray<Run> = [
        GitDiff.diff.run({
          base: history.git("rev-list", "--max-parents=0", "HEAD").trim(),
          compare: "HEAD",
          maxDiffSize: 900,
          maxFiles: 12
        }),
        GitLog.log.run({ includeDiff: true, limit: 12, maxDiffSize: 2000 }),
        GitShow.show.run({ rev: "HEAD~27", maxDiffSize: 100 })
      ]
      for (const input of inputs) {
        const native = await runWith(history.dir, "native", input)
        const iso = await runWith(history.dir, "isomorphic", input)
        expect(iso).toEqual(native)
      }
    })

    it("agree that an abbreviated hash shared by two commits is ambiguous", async () => {
      const r = generatedRepo({ commits: 1500, files: 20 })
      try {
        const hashes = r.git("rev-list", "--all").trim().split("\n")
        const seen = new Map<string, number>()
        for (const h of hashes) seen.set(h.slice(0, 4), (seen.get(h.slice(0, 4)) ?? 0) + 1)
        const prefix = [...seen].find(([, n]) => n > 1)?.[0]
        expect(prefix).toBeDefined()
        for (const backend of backends) {
          const e = await failureWith(r.dir, backend, GitShow.show.run({ rev: prefix! }))
          expect(e).toMatchObject({ _tag: "UnknownRevision", reason: "ambiguous" })
        }
      } finally {
        r.dispose()
      }
    })

    it("a native call that is interrupted kills its git", async () => {
      // A git that never ends, first on the PATH that every call reads.
      const bin = fs.mkdtempSync(path.join(os.tmpdir(), "slow-git-"))
      const marker = `3${Math.floor(Math.random() * 1e6)}.5`
      fs.writeFileSync(path.join(bin, "git"), `#!/bin/sh\nexec sleep ${marker}\n`, { mode: 0o755 })
      const before = process.env.PATH
      process.env.PATH = `${bin}:${before}`
      const sleeping = () =>
        fs.readdirSync("/proc").filter((p) => {
          try {
            return /^\d+$/.test(p) && fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker)
          } catch {
            return false
          }
        })
      try {
        const outcome = await Effect.runPromise(
          Effect.gen(function* () {
            const backend = yield* GitBackend.GitBackend
            const repo = yield* GitBackend.repository(history.dir)
            const call = yield* Effect.forkChild(backend.status(repo, { limit: 10 }))
            for (let i = 0; i < 100 && sleeping().length === 0; i++) yield* Effect.sleep("20 millis")
            const started = sleeping().length
            yield* Fiber.interrupt(call)
            return started
          }).pipe(Effect.provide(GitBackend.layerNative))
        )
        expect(outcome).toBe(1)
        for (let i = 0; i < 100 && sleeping().length > 0; i++) await new Promise((r) => setTimeout(r, 20))
        expect(sleeping()).toEqual([])
      } finally {
        process.env.PATH = before
        fs.rmSync(bin, { recursive: true, force: true })
      }
    })

    it("read a repository directly through the backend service", async () => {
      for (const layer of [
        GitBackend.layerNative,
        GitBackend.layerNativeWith.pipe(Layer.provide(NodeServices.layer)),
        GitBackend.layerIsomorphic
      ]) {
        const head = await Effect.runPromise(
          Effect.gen(function* () {
            const backend = yield* GitBackend.GitBackend
            const repo = yield* GitBackend.repository(history.dir)
            return (yield* backend.status(repo, { limit: 10 })).head
          }).pipe(Effect.provide(layer))
        )
        expect(head).toBe(history.head())
      }
    })
  })

  describe("backend selection", () => {
    const kindOf = (layer: Layer.Layer<GitBackend.GitBackend>) =>
      Effect.runPromise(
        Effect.gen(function* () {
          return (yield* GitBackend.GitBackend).kind
        }).pipe(Effect.provide(layer))
      )

    it("picks the native backend when git runs", async () => {
      expect(await kindOf(GitBackend.layer)).toBe(hasGit ? "native" : "isomorphic")
    })

    it("follows the Selection reference", async () => {
      const choose = (s: "native" | "isomorphic") =>
        GitBackend.layer.pipe(Layer.provide(Layer.succeed(GitBackend.Selection, s)))
      expect(await kindOf(choose("isomorphic"))).toBe("isomorphic")
      expect(await kindOf(choose("native"))).toBe("native")
    })
  })
})
