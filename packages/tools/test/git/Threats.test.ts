/**
 * threats.md §Git (13-18) and the holes found in ugent itself (32-34), each
 * as tests over both backends.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Tool } from "@ugent/core"
import { GitBlame, GitDiff, GitLog, GitShow, GitStatus, Read } from "@ugent/tools"
import { Effect } from "effect"
import { backends, failureWith, gitGate, historyRepo, layerFor, Repo, type Run, runWith } from "./fixtures.ts"

const gate = gitGate()

const scratch = () => fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), "git-threat-")))

/** Every file under a directory with its size and modification time. */
const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else {
        const st = fs.lstatSync(p)
        out[path.relative(dir, p)] = `${st.size}:${st.mtimeMs}`
      }
    }
  }
  walk(dir)
  return out
}

/** Every tool, run once with an input that reaches the backend. */
const everyTool = (rev?: string) =>
  Effect.all([
    GitStatus.status.run({}),
    GitLog.log.run({ includeDiff: true, limit: 5, ...(rev === undefined ? {} : { rev }) }),
    GitDiff.diff.run({}),
    GitDiff.diff.run({ staged: true }),
    GitBlame.blame.run({ path: "README.md" }),
    GitShow.show.run(rev === undefined ? {} : { rev })
  ])

describe.skipIf(gate.skip)(`threats.md §Git${gate.note}`, () => {
  let repo: Repo
  let outside: string
  beforeAll(() => {
    repo = historyRepo()
    outside = scratch()
  })
  afterAll(() => {
    repo.dispose()
    fs.rmSync(outside, { recursive: true, force: true })
  })

  describe.each(backends)("%s backend", (backend) => {
    describe("13. argument injection", () => {
      const optionLike = ["--output=OUT/pwned", "-p", "--exec=touch OUT/pwned", "-n1", "--", "-"]
      const revisionInputs = (rev: string): ReadonlyArray<Run> => [
        GitLog.log.run({ rev }),
        GitDiff.diff.run({ base: rev }),
        GitDiff.diff.run({ base: "HEAD~1", compare: rev }),
        GitBlame.blame.run({ path: "README.md", rev }),
        GitShow.show.run({ rev })
      ]

      it("refuses a revision that starts with '-' in every tool, before git runs", async () => {
        for (const raw of optionLike) {
          const rev = raw.replace("OUT", outside)
          for (const run of revisionInputs(rev)) {
            const e = await failureWith(repo.dir, backend, run)
            expect(e).toMatchObject({ _tag: "InvalidRevision", reason: "option-like", revision: rev })
          }
        }
        expect(fs.existsSync(path.join(outside, "pwned"))).toBe(false)
      })

      it("refuses ranges, reflog selectors, paths, searches and control characters", async () => {
        for (const rev of [
          "HEAD:README.md",
          "main..feature",
          "HEAD@{1}",
          ":/Initial",
          "HEAD^{tree}",
          "a b",
          "HEAD\n-p",
          "",
          "v1.0.lock"
        ]) {
          const e = await failureWith(repo.dir, backend, GitShow.show.run({ rev }))
          expect(e, JSON.stringify(rev)).toMatchObject({ _tag: "InvalidRevision", reason: "syntax" })
        }
      })

      it("passes paths after '--', so a file named like an option is just a file", async () => {
        const out = await runWith(repo.dir, backend, GitLog.log.run({ path: "--output=x.txt" }))
        expect(out.commits.map((c) => c.subject)).toEqual(["Initial commit"])
        const blame = await runWith(repo.dir, backend, GitBlame.blame.run({ path: "--output=x.txt", rev: "HEAD" }))
        expect(blame.lines.map((l) => l.text)).toEqual(["a file whose name looks like an option"])
        const root = repo.git("rev-list", "--max-parents=0", "HEAD").trim()
        const shown = await runWith(repo.dir, backend, GitShow.show.run({ rev: root, paths: ["--output=x.txt"] }))
        expect(shown.diff?.files.map((f) => f.path)).toEqual(["--output=x.txt"])
      })

      it("keeps author and message filters inside their own argument", async () => {
        const value = `--output=${outside}/pwned`
        const out = await runWith(repo.dir, backend, GitLog.log.run({ author: value, grep: "-p" }))
        expect(out.commits).toEqual([])
        expect(fs.existsSync(path.join(outside, "pwned"))).toBe(false)
      })
    })

    describe("14. the repository is checked against the workspace root", () => {
      it("refuses a repository outside the workspace", async () => {
        for (const repository of ["..", "/", outside]) {
          const e = await failureWith(repo.dir, backend, GitStatus.status.run({ repository }))
          expect(e, repository).toMatchObject({ _tag: "OutsideWorkspace" })
        }
      })

      it("does not search parent directories for a repository", async () => {
        const e = await failureWith(path.join(repo.dir, "src"), backend, GitStatus.status.run({}))
        expect(e).toMatchObject({ _tag: "NotARepository", reason: "no-git-dir" })
        expect(e.message).toContain("never search parent directories")
      })

      it("refuses a .git file or link that points outside the workspace", async () => {
        const ws = scratch()
        try {
          fs.mkdirSync(path.join(ws, "by-file"))
          fs.writeFileSync(path.join(ws, "by-file", ".git"), `gitdir: ${path.join(repo.dir, ".git")}\n`)
          fs.mkdirSync(path.join(ws, "by-link"))
          fs.symlinkSync(path.join(repo.dir, ".git"), path.join(ws, "by-link", ".git"))
          for (const repository of ["by-file", "by-link"]) {
            const e = await failureWith(ws, backend, GitLog.log.run({ repository }))
            expect(e, repository).toMatchObject({ _tag: "NotARepository", reason: "git-dir-outside" })
          }
        } finally {
          fs.rmSync(ws, { recursive: true, force: true })
        }
      })

      it("reads a repository in a sub-directory of the workspace", async () => {
        const ws = scratch()
        try {
          const inner = new Repo(path.join(ws, "vendor", "lib"))
          fs.mkdirSync(inner.dir, { recursive: true })
          inner.git("init", "-q", "-b", "trunk")
          inner.write("lib.txt", "library\n").commit("vendored")
          const out = await runWith(ws, backend, GitLog.log.run({ repository: "vendor/lib" }))
          expect(out.commits.map((c) => c.subject)).toEqual(["vendored"])
          const e = await failureWith(ws, backend, GitStatus.status.run({}))
          expect(e).toMatchObject({ _tag: "NotARepository" })
        } finally {
          fs.rmSync(ws, { recursive: true, force: true })
        }
      })
    })

    describe("15. path traversal", () => {
      it("refuses paths that leave the repository in every tool", async () => {
        for (const p of ["../../.kube/config", "../outside.txt", "/etc/passwd", "src/../../x", ".git/config", ".git"]) {
          const runs: ReadonlyArray<Run> = [
            GitLog.log.run({ path: p }),
            GitBlame.blame.run({ path: p }),
            GitDiff.diff.run({ paths: ["src", p] }),
            GitShow.show.run({ paths: [p] })
          ]
          for (const run of runs) {
            const e = await failureWith(repo.dir, backend, run)
            expect(e, p).toMatchObject({ _tag: "PathNotInRepository", reason: "outside" })
          }
        }
      })

      it("refuses a path of the workspace that is outside a sub-directory repository", async () => {
        const ws = scratch()
        try {
          const inner = new Repo(path.join(ws, "lib"))
          fs.mkdirSync(inner.dir)
          inner.git("init", "-q", "-b", "main")
          inner.write("a.txt", "a\n").commit("a")
          fs.writeFileSync(path.join(ws, "secret.txt"), "not in the repository\n")
          const e = await failureWith(ws, backend, GitBlame.blame.run({ repository: "lib", path: "secret.txt" }))
          expect(e).toMatchObject({ _tag: "PathNotInRepository", reason: "outside" })
        } finally {
          fs.rmSync(ws, { recursive: true, force: true })
        }
      })

      it("never reads through a symbolic link out of the working tree", async () => {
        fs.writeFileSync(path.join(outside, "outside-notes.txt"), "TOP SECRET\n")
        fs.symlinkSync(outside, path.join(repo.dir, "escape"))
        try {
          const e = await failureWith(repo.dir, backend, GitBlame.blame.run({ path: "escape/outside-notes.txt" }))
          expect(e).toMatchObject({ _tag: "OutsideWorkspace" })
          const d = await runWith(repo.dir, backend, GitDiff.diff.run({}))
          expect(JSON.stringify(d)).not.toContain("TOP SECRET")
        } finally {
          fs.rmSync(path.join(repo.dir, "escape"))
        }
      })
    })

    describe("16. malicious ref names stored in the repository", () => {
      let evil: Repo
      beforeAll(() => {
        evil = historyRepo()
        evil.git("update-ref", "refs/heads/--format=x", "HEAD~1")
        evil.git("update-ref", `refs/heads/--output=${outside}/ref-pwned`, "HEAD~2")
        evil.git("update-ref", "refs/tags/-n", "HEAD~3")
      })
      afterAll(() => evil.dispose())

      it("refuses the bare names, which git would read as options", async () => {
        for (const rev of ["--format=x", `--output=${outside}/ref-pwned`, "-n"]) {
          const e = await failureWith(evil.dir, backend, GitLog.log.run({ rev }))
          expect(e).toMatchObject({ _tag: "InvalidRevision", reason: "option-like" })
        }
      })

      it("resolves their qualified names to commits, and passes only hashes to git", async () => {
        const out = await runWith(
          evil.dir,
          backend,
          GitLog.log.run({ rev: `refs/heads/--output=${outside}/ref-pwned`, limit: 1 })
        )
        expect(out.commits[0]?.hash).toBe(evil.git("rev-parse", "HEAD~2").trim())
        const tagged = await runWith(evil.dir, backend, GitShow.show.run({ rev: "tags/-n", includeDiff: false }))
        expect(tagged.commit.hash).toBe(evil.git("rev-parse", "HEAD~3").trim())
        expect(fs.existsSync(path.join(outside, "ref-pwned"))).toBe(false)
      })

      it("works with HEAD on a branch named like an option", async () => {
        const r = historyRepo()
        try {
          r.git("update-ref", "refs/heads/--format=x", "HEAD")
          r.git("symbolic-ref", "HEAD", "refs/heads/--format=x")
          const [status, log, , , blame, show] = await runWith(r.dir, backend, everyTool())
          expect(status.branch).toBe("--format=x")
          expect(log.commits[0]?.hash).toBe(r.head())
          expect(blame.lines.length).toBeGreaterThan(0)
          expect(show.commit.hash).toBe(r.head())
        } finally {
          r.dispose()
        }
      })
    })

    describe("17. no tool creates a repository or writes to one", () => {
      it("offers exactly five read-only tools and no init", () => {
        const tools: ReadonlyArray<Tool.Any> = [
          GitStatus.status,
          GitLog.log,
          GitDiff.diff,
          GitBlame.blame,
          GitShow.show
        ]
        expect(tools.map((t) => t.name)).toEqual(["git.status", "git.log", "git.diff", "git.blame", "git.show"])
        for (const t of tools) {
          expect(t.trust, t.name).toBe(0)
          expect(t.effects, t.name).toMatchObject({
            readsFs: true,
            writesFs: false,
            callsShell: false,
            callsNetwork: false
          })
        }
      })

      it("fails on a directory without a repository and leaves it without one", async () => {
        const ws = scratch()
        try {
          fs.writeFileSync(path.join(ws, "file.txt"), "x\n")
          const runs: ReadonlyArray<Run> = [GitStatus.status.run({}), GitLog.log.run({}), GitDiff.diff.run({})]
          for (const run of runs) {
            const e = await failureWith(ws, backend, run)
            expect(e).toMatchObject({ _tag: "NotARepository", reason: "no-git-dir" })
          }
          expect(fs.readdirSync(ws)).toEqual(["file.txt"])
        } finally {
          fs.rmSync(ws, { recursive: true, force: true })
        }
      })

      it("never writes into .git, even when the index's stat data is stale", async () => {
        const r = historyRepo()
        try {
          // Touch tracked files so their stat no longer matches the index (git would refresh it).
          const future = new Date(Date.now() + 60_000)
          for (const f of ["README.md", "src/main.ts", "src/long.ts"])
            fs.utimesSync(path.join(r.dir, f), future, future)
          r.write("src/main.ts", `${r.read("src/main.ts")}// dirty\n`)
          const before = snapshot(path.join(r.dir, ".git"))
          await runWith(r.dir, backend, everyTool())
          expect(snapshot(path.join(r.dir, ".git"))).toEqual(before)
        } finally {
          r.dispose()
        }
      })
    })

    describe("18. values in git config never run commands", () => {
      let trap: Repo
      let marks: string
      beforeAll(() => {
        trap = historyRepo()
        marks = scratch()
        const touch = (name: string) => `touch ${marks}/${name}`
        const script = path.join(marks, "gpg.sh")
        fs.writeFileSync(script, `#!/bin/sh\n${touch("gpg")}\n`)
        fs.chmodSync(script, 0o755)
        const hooks = path.join(marks, "hooks")
        fs.mkdirSync(hooks)
        for (const h of ["post-checkout", "pre-commit", "post-index-change", "reference-transaction"]) {
          fs.writeFileSync(path.join(hooks, h), `#!/bin/sh\n${touch(`hook-${h}`)}\n`)
          fs.chmodSync(path.join(hooks, h), 0o755)
        }
        // A signed-looking commit, so a signature check would call gpg.program.
        const head = trap.head()
        const tree = trap.git("rev-parse", "HEAD^{tree}").trim()
        const body = `tree ${tree}\nparent ${head}\nauthor Ada Lovelace <ada@example.com> 1704070000 +0000\ncommitter Ada Lovelace <ada@example.com> 1704070000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nsigned\n`
        const oid = trap.writeObject("commit", body)
        trap.git("update-ref", "refs/heads/main", oid)
        fs.writeFileSync(path.join(trap.dir, "extra.cfg"), `[core]\n\tfsmonitor = ${touch("included-fsmonitor")}\n`)
        fs.appendFileSync(
          path.join(trap.dir, ".git", "config"),
          [
            "[core]",
            `\tfsmonitor = ${touch("fsmonitor")}`,
            `\tpager = ${touch("pager")}`,
            `\thooksPath = ${hooks}`,
            `\tsshCommand = ${touch("ssh")}`,
            "[diff]",
            `\texternal = ${touch("external")}`,
            '[diff "evil"]',
            `\ttextconv = ${touch("textconv")}`,
            `\tcommand = ${touch("diff-command")}`,
            '[filter "evil"]',
            `\tclean = ${touch("clean")}`,
            `\tsmudge = ${touch("smudge")}`,
            `\tprocess = ${touch("process")}`,
            "\trequired = true",
            "[log]",
            "\tshowSignature = true",
            "[gpg]",
            `\tprogram = ${script}`,
            "[alias]",
            `\tstatus = !${touch("alias")}`,
            "[include]",
            "\tpath = ../extra.cfg",
            ""
          ].join("\n")
        )
        trap.write(".gitattributes", "* filter=evil diff=evil\n")
        trap.write("README.md", `${trap.read("README.md")}dirty for the filters\n`)
        const future = new Date(Date.now() + 60_000)
        fs.utimesSync(path.join(trap.dir, "src/main.ts"), future, future)
      })
      afterAll(() => {
        trap.dispose()
        fs.rmSync(marks, { recursive: true, force: true })
      })

      const fired = () => fs.readdirSync(marks).filter((f) => f !== "gpg.sh" && f !== "hooks")

      it("the trap is armed: plain git runs the repository's fsmonitor and filters", () => {
        spawnSync("git", ["status", "--porcelain"], { cwd: trap.dir, env: trap.env() })
        spawnSync("git", ["log", "-1"], { cwd: trap.dir, env: trap.env() })
        expect(fired()).toEqual(expect.arrayContaining(["included-fsmonitor", "process", "gpg"]))
        for (const f of fired()) fs.rmSync(path.join(marks, f))
      })

      it("no tool runs any of them", async () => {
        const previous = process.env.GIT_EXTERNAL_DIFF
        process.env.GIT_EXTERNAL_DIFF = `${marks}/gpg.sh`
        try {
          const [status, log] = await runWith(trap.dir, backend, everyTool())
          expect(status.unstaged.map((c) => c.path)).toContain("README.md")
          expect(log.commits[0]?.subject).toBe("signed")
        } finally {
          if (previous === undefined) delete process.env.GIT_EXTERNAL_DIFF
          else process.env.GIT_EXTERNAL_DIFF = previous
        }
        expect(fired()).toEqual([])
      })
    })

    describe("threat 32: a path handed to git never leads out through a linked directory", () => {
      let r: Repo
      let elsewhere: string
      beforeAll(() => {
        r = historyRepo()
        elsewhere = scratch()
        fs.writeFileSync(path.join(elsewhere, "passwd"), "root:x:0:0:OUTSIDE-PASSWD-LINE\n")
        r.write("etc/passwd", "committed line\n").commit("an etc/passwd of the project")
        // The committed directory is replaced by a link out of the root, as an unpacked archive can leave it.
        fs.rmSync(path.join(r.dir, "etc"), { recursive: true })
        fs.symlinkSync(elsewhere, path.join(r.dir, "etc"))
        fs.symlinkSync("/etc", path.join(r.dir, "sys"))
      })
      afterAll(() => {
        r.dispose()
        fs.rmSync(elsewhere, { recursive: true, force: true })
      })

      it("the plain git CLI would read the outside file (the trap is armed)", () => {
        const out = spawnSync("git", ["blame", "--porcelain", "--", "etc/passwd"], { cwd: r.dir, env: r.env() })
        expect(out.stdout.toString()).toContain("OUTSIDE-PASSWD-LINE")
      })

      it("git.blame refuses it as file.read does, with or without a revision; nothing outside is shown", async () => {
        const read = await failureWith(r.dir, backend, Read.read.run({ path: "etc/passwd" }))
        expect(read).toMatchObject({ _tag: "OutsideWorkspace" })
        for (const p of ["etc/passwd", "sys/passwd", "sys/hostname"]) {
          for (const rev of [undefined, "HEAD"]) {
            const e = await failureWith(
              r.dir,
              backend,
              GitBlame.blame.run({ path: p, ...(rev === undefined ? {} : { rev }) })
            )
            expect(e, `${p} ${rev}`).toMatchObject({ _tag: "OutsideWorkspace" })
            expect(JSON.stringify(e)).not.toContain("OUTSIDE-PASSWD-LINE")
          }
        }
      })

      it("every git tool refuses such a path", async () => {
        const runs: ReadonlyArray<Run> = [
          GitLog.log.run({ path: "etc/passwd" }),
          GitDiff.diff.run({ paths: ["etc/passwd"] }),
          GitShow.show.run({ paths: ["etc/passwd"] }),
          GitLog.log.run({ path: "sys/x/y" })
        ]
        for (const run of runs) {
          expect(await failureWith(r.dir, backend, run)).toMatchObject({ _tag: "OutsideWorkspace" })
        }
      })

      it("a tracked link is blamed as the link git stores, never followed", async () => {
        const l = historyRepo()
        try {
          fs.symlinkSync(path.join(elsewhere, "passwd"), path.join(l.dir, "innocent.txt"))
          l.commit("a link")
          const out = await runWith(l.dir, backend, GitBlame.blame.run({ path: "innocent.txt" }))
          expect(out.lines.map((x) => x.text)).toEqual([path.join(elsewhere, "passwd")])
          expect(JSON.stringify(out)).not.toContain("OUTSIDE-PASSWD-LINE")
          // The working tree's file is what is blamed: an uncommitted change shows as such.
          l.write("README.md", `${l.read("README.md")}uncommitted\n`)
          const readme = await runWith(l.dir, backend, GitBlame.blame.run({ path: "README.md" }))
          expect(readme.lines.at(-1)).toMatchObject({ text: "uncommitted", commit: null })
        } finally {
          l.dispose()
        }
      })
    })

    describe("threat 33: files and programs named by the repository's config are never used; git's stderr never shows", () => {
      let r: Repo
      let elsewhere: string
      let marks: string
      beforeAll(() => {
        r = historyRepo()
        elsewhere = scratch()
        marks = scratch()
        const at = (name: string) => path.join(elsewhere, name)
        const touch = (name: string) => `touch ${marks}/${name}`
        fs.writeFileSync(at("first-line"), "SECRET-FIRST-LINE of a credential file\n")
        fs.writeFileSync(at("excludes"), "*.txt\n")
        fs.writeFileSync(at("attributes"), "* -diff\n")
        fs.writeFileSync(at("mailmap"), "Mallory LEAKED-MAILMAP <mallory@example.com> <ada@example.com>\n")
        fs.writeFileSync(
          at("included.cfg"),
          `[core]\n\tfsmonitor = ${touch("included")}\n[mailmap]\n\tfile = ${at("mailmap")}\n`
        )
        fs.appendFileSync(
          path.join(r.dir, ".git", "config"),
          [
            "[blame]",
            `\tignoreRevsFile = ${at("first-line")}`,
            "[core]",
            `\texcludesFile = ${at("excludes")}`,
            `\tattributesFile = ${at("attributes")}`,
            `\taskPass = ${touch("askpass")}`,
            "[mailmap]",
            `\tfile = ${at("mailmap")}`,
            "\tblob = HEAD:README.md",
            "[include]",
            `\tpath = ${at("included.cfg")}`,
            '[includeIf "gitdir:/"]',
            `\tpath = ${at("included.cfg")}`,
            "[credential]",
            `\thelper = !${touch("credential")}`,
            "[sequence]",
            `\teditor = ${touch("editor")}`,
            "[diff]",
            `\torderFile = ${at("first-line")}`,
            ""
          ].join("\n")
        )
        r.write("new.txt", "untracked\n")
        r.write("src/main.ts", `${r.read("src/main.ts")}// changed\n`)
      })
      afterAll(() => {
        r.dispose()
        fs.rmSync(elsewhere, { recursive: true, force: true })
        fs.rmSync(marks, { recursive: true, force: true })
      })

      it("the plain git CLI would use them (the trap is armed)", () => {
        const blame = spawnSync("git", ["blame", "--", "README.md"], { cwd: r.dir, env: r.env() })
        expect(blame.stderr.toString()).toContain("SECRET-FIRST-LINE")
        const log = spawnSync("git", ["log", "-1", "--format=%aN"], { cwd: r.dir, env: r.env() })
        expect(log.stdout.toString()).toContain("LEAKED-MAILMAP")
      })

      it("every tool works as if they were not there, and nothing they name is read or run", async () => {
        const [status, log, diff, , blame, show] = await runWith(r.dir, backend, everyTool())
        expect(status.untracked).toContain("new.txt")
        expect(diff.files.find((f) => f.path === "src/main.ts")?.hunks.length).toBeGreaterThan(0)
        expect(blame.lines.length).toBeGreaterThan(0)
        const all = JSON.stringify([status, log, diff, blame, show])
        expect(all).not.toContain("SECRET-FIRST-LINE")
        expect(all).not.toContain("LEAKED-MAILMAP")
        expect(fs.readdirSync(marks)).toEqual([])
      })

      it("a failure reports a fixed reason, never git's words", async () => {
        const broken = historyRepo()
        try {
          broken.git("pack-refs", "--all")
          fs.appendFileSync(path.join(broken.dir, ".git", "packed-refs"), "SECRET-PACKED-LINE of something\n")
          const plain = spawnSync("git", ["status"], { cwd: broken.dir, env: broken.env() })
          expect(plain.stderr.toString()).toContain("SECRET-PACKED-LINE")
          const outcome = await Effect.runPromise(
            Effect.exit(Effect.provide(GitStatus.status.run({}), layerFor(broken.dir, backend)))
          )
          expect(JSON.stringify(outcome)).not.toContain("SECRET-PACKED-LINE")
          if (outcome._tag === "Failure") expect(JSON.stringify(outcome.cause)).toContain("GitFailed")
        } finally {
          broken.dispose()
        }
      })

      it("the keys that change how a repository is read still apply, and a change of them is seen (core.filemode)", async () => {
        const m = historyRepo()
        try {
          m.git("config", "core.filemode", "false")
          fs.chmodSync(path.join(m.dir, "src/main.ts"), 0o755)
          const status = await runWith(m.dir, backend, GitStatus.status.run({}))
          expect(status.unstaged).toEqual([])
          m.git("config", "core.filemode", "true")
          const again = await runWith(m.dir, backend, GitStatus.status.run({}))
          expect(again.unstaged.map((c) => c.path)).toEqual(["src/main.ts"])
        } finally {
          m.dispose()
        }
      })

      it("a repository config that is a link out of the root is refused", async () => {
        const l = historyRepo()
        try {
          fs.copyFileSync(path.join(l.dir, ".git", "config"), path.join(elsewhere, "config"))
          fs.rmSync(path.join(l.dir, ".git", "config"))
          fs.symlinkSync(path.join(elsewhere, "config"), path.join(l.dir, ".git", "config"))
          const e = await failureWith(l.dir, backend, GitStatus.status.run({}))
          expect(e).toMatchObject({ _tag: "NotARepository", reason: "store-outside", part: ".git/config" })
        } finally {
          l.dispose()
        }
      })
    })

    describe("threat 34: an object store, refs or alternates outside the root are refused", () => {
      let other: Repo
      let otherHead: string
      beforeAll(() => {
        other = Repo.create("git-other-")
        other.write("secret-plan.md", "OUTSIDE-HISTORY content\n").commit("OUTSIDE-HISTORY subject")
        other.git("repack", "-a", "-d", "-q")
        other.git("pack-refs", "--all")
        otherHead = other.head()
      })
      afterAll(() => other.dispose())

      /** A repository inside a fresh workspace, shaped by `plant`, read by every tool. */
      const planted = async (plant: (r: Repo) => void, part: string | RegExp) => {
        const r = Repo.create("git-planted-")
        try {
          r.write("a.txt", "a\n").commit("inside")
          plant(r)
          for (const run of [
            GitLog.log.run({ includeDiff: true }),
            GitShow.show.run({ rev: otherHead }),
            GitStatus.status.run({})
          ] as ReadonlyArray<Run>) {
            const e = await failureWith(r.dir, backend, run)
            expect(e, String(part)).toMatchObject({
              _tag: "NotARepository",
              reason: "store-outside",
              part: typeof part === "string" ? part : expect.stringMatching(part)
            })
            expect(e.message).toMatch(typeof part === "string" ? part : new RegExp(part.source.slice(1)))
            expect(JSON.stringify(e)).not.toContain("OUTSIDE-HISTORY")
          }
        } finally {
          r.dispose()
        }
      }
      const gitDir = (r: Repo, ...p: ReadonlyArray<string>) => path.join(r.dir, ".git", ...p)
      const pointAtOther = (r: Repo) => fs.writeFileSync(gitDir(r, "refs", "heads", "main"), `${otherHead}\n`)

      it("the plain git CLI would show the other repository's history (the trap is armed)", () => {
        const r = Repo.create("git-planted-")
        try {
          r.write("a.txt", "a\n").commit("inside")
          fs.writeFileSync(gitDir(r, "objects", "info", "alternates"), `${path.join(other.dir, ".git", "objects")}\n`)
          pointAtOther(r)
          expect(r.git("log", "-p")).toContain("OUTSIDE-HISTORY")
        } finally {
          r.dispose()
        }
      })

      it("objects/info/alternates naming another repository", () =>
        planted((r) => {
          fs.writeFileSync(gitDir(r, "objects", "info", "alternates"), `${path.join(other.dir, ".git", "objects")}\n`)
          pointAtOther(r)
        }, ".git/objects/info/alternates"))

      it("a relative alternate climbing out", () =>
        planted((r) => {
          const rel = path.relative(gitDir(r, "objects"), path.join(other.dir, ".git", "objects"))
          fs.writeFileSync(gitDir(r, "objects", "info", "alternates"), `# a comment\n${rel}\n`)
          pointAtOther(r)
        }, ".git/objects/info/alternates"))

      it("the objects directory as a link", () =>
        planted((r) => {
          fs.rmSync(gitDir(r, "objects"), { recursive: true })
          fs.symlinkSync(path.join(other.dir, ".git", "objects"), gitDir(r, "objects"))
          pointAtOther(r)
        }, ".git/objects"))

      it("a pack linked in from another repository", () =>
        planted((r) => {
          const packs = path.join(other.dir, ".git", "objects", "pack")
          for (const f of fs.readdirSync(packs)) fs.symlinkSync(path.join(packs, f), gitDir(r, "objects", "pack", f))
          pointAtOther(r)
        }, /^\.git\/objects\/pack\/pack-[0-9a-f]+\./))

      it("the refs directory, packed-refs or the index as links", async () => {
        await planted((r) => {
          fs.rmSync(gitDir(r, "refs"), { recursive: true })
          fs.symlinkSync(path.join(other.dir, ".git", "refs"), gitDir(r, "refs"))
        }, ".git/refs")
        await planted((r) => {
          fs.symlinkSync(path.join(other.dir, ".git", "packed-refs"), gitDir(r, "packed-refs"))
        }, ".git/packed-refs")
        await planted((r) => {
          fs.rmSync(gitDir(r, "index"))
          fs.symlinkSync(path.join(other.dir, ".git", "index"), gitDir(r, "index"))
        }, ".git/index")
      })

      it("a commondir naming another repository", async () => {
        const r = Repo.create("git-planted-")
        try {
          r.write("a.txt", "a\n").commit("inside")
          fs.writeFileSync(gitDir(r, "commondir"), `${path.join(other.dir, ".git")}\n`)
          const e = await failureWith(r.dir, backend, GitLog.log.run({}))
          expect(e).toMatchObject({ _tag: "NotARepository", reason: "git-dir-outside" })
        } finally {
          r.dispose()
        }
      })

      // isomorphic-git does not follow alternates at all, so only the native backend has this case (not a skip).
      const nativeOnly = backend === "native" ? it : () => undefined
      nativeOnly("alternates inside the workspace keep working", async () => {
        const ws = scratch()
        try {
          const origin = new Repo(path.join(ws, "origin"))
          fs.mkdirSync(origin.dir)
          origin.git("init", "-q", "-b", "main")
          origin.write("x.txt", "x\n").commit("shared history")
          execFileSync("git", ["clone", "-q", "--shared", origin.dir, path.join(ws, "copy")], { env: origin.env() })
          const out = await runWith(ws, backend, GitLog.log.run({ repository: "copy" }))
          expect(out.commits.map((c) => c.subject)).toEqual(["shared history"])
        } finally {
          fs.rmSync(ws, { recursive: true, force: true })
        }
      })
    })
  })
})
