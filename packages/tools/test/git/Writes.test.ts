/**
 * The git writes on both backends: the same commit object (hash included)
 * as each other and as the git CLI makes from the same inputs, the seeds'
 * refusals (nothing staged, a staged secret, an amend of a pushed commit or
 * of someone else's), branches, switches and stashes that leave the same
 * working tree, and hooks run from `.git` only, never skipped. Every
 * repository is a canary the test makes in a temporary directory.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Trust } from "@ugent/core"
import {
  Checkpoint,
  Checkpoints,
  GitAdd,
  GitBackend,
  GitBranch,
  GitCommit,
  GitStash,
  GitStatus,
  GitSwitch,
  Workspace
} from "@ugent/tools"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { backends, gitGate, Repo } from "./fixtures.ts"

const gate = gitGate()
const made: Array<Repo> = []
afterAll(() => {
  for (const r of made) r.dispose()
})

/** 2024-03-01T12:00:00Z: the time every commit here is made at. */
const now = 1_709_294_400_000

type Services = Workspace.Workspace | GitBackend.GitBackend | Trust.Capability

const layers = (root: string, backend: "native" | "isomorphic", checkpoints = false) =>
  Layer.mergeAll(
    Workspace.layer({ root, ...(checkpoints ? { checkpoints: {} } : {}) }).pipe(Layer.orDie),
    backend === "native" ? GitBackend.layerNative : GitBackend.layerIsomorphic,
    Trust.grant(3),
    TestClock.layer()
  )

const run = <A, E>(root: string, backend: "native" | "isomorphic", effect: Effect.Effect<A, E, Services>) =>
  Effect.runPromise(Effect.provide(Effect.andThen(TestClock.setTime(now), effect), layers(root, backend)))

const fail = <A, E>(root: string, backend: "native" | "isomorphic", effect: Effect.Effect<A, E, Services>) =>
  run(root, backend, Effect.flip(effect)) as Promise<E & { readonly _tag: string; readonly message: string }>

/** A repository with a configured user and one commit by them. */
const base = (prefix = "git-write-"): Repo => {
  const r = Repo.create(prefix)
  made.push(r)
  r.git("config", "user.name", "Ada Lovelace")
  r.git("config", "user.email", "ada@example.com")
  r.write("README.md", "# Canary\n")
  r.write("src/a.ts", "export const a = 1\n")
  r.write("src/old.ts", "export const old = 0\n")
  r.commit("Initial commit")
  return r
}

/** A copy of a repository, as a separate canary. */
const copy = (r: Repo): Repo => {
  const c = Repo.create("git-write-copy-")
  made.push(c)
  fs.rmSync(c.dir, { recursive: true, force: true })
  fs.cpSync(r.dir, c.dir, { recursive: true, verbatimSymlinks: true })
  return new Repo(c.dir)
}

/** The same changes in a working tree: one edited, one new in a new folder, one removed. */
const change = (r: Repo) => {
  r.write("src/a.ts", "export const a = 2\n")
  r.write("docs/new.md", "new\n")
  r.remove("src/old.ts")
}

const message = "Change a, add docs, drop old\r\n\nWhy: the canary needs all three kinds.  \n\n\n"

/** Files and their bytes under the working tree, `.git` left out. */
const tree = (dir: string) =>
  Object.fromEntries(
    fs
      .readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((p) => !p.startsWith(".git") && !p.startsWith(".ugent") && fs.statSync(path.join(dir, p)).isFile())
      .sort()
      .map((p) => [p, fs.readFileSync(path.join(dir, p), "utf8")])
  )

describe.skipIf(gate.skip)(`git writes${gate.note}`, () => {
  it("a commit is the same object, hash included, on both backends and from the git CLI", async () => {
    const start = base()
    const [native, iso, cli] = [copy(start), copy(start), copy(start)]
    for (const r of [native, iso, cli]) change(r)
    const commitOn = (r: Repo, backend: "native" | "isomorphic") =>
      run(
        r.dir,
        backend,
        Effect.gen(function* () {
          yield* GitAdd.add.run({ paths: ["."] })
          return yield* GitCommit.commit.run({ message })
        })
      )
    const a = await commitOn(native, "native")
    const b = await commitOn(iso, "isomorphic")
    cli.git("add", "-A")
    const date = `@${now / 1000} +0000`
    execFileSync("git", ["commit", "-q", "--cleanup=verbatim", "-F", "-"], {
      cwd: cli.dir,
      input: "Change a, add docs, drop old\n\nWhy: the canary needs all three kinds.\n",
      env: { ...cli.env(), GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }
    })
    expect(a.commit!.hash).toBe(b.commit!.hash)
    expect(a.commit!.hash).toBe(cli.head())
    expect(a.commit!.subject).toBe("Change a, add docs, drop old")
    expect(native.git("log", "-1", "--format=%B")).toBe(
      "Change a, add docs, drop old\n\nWhy: the canary needs all three kinds.\n\n"
    )
    // git status after the commit, in the result.
    expect(a.status.clean).toBe(true)
    expect(b.status.clean).toBe(true)
    expect(a.files.map((f) => `${f.status} ${f.path}`)).toEqual([
      "added docs/new.md",
      "modified src/a.ts",
      "deleted src/old.ts"
    ])
    expect(b.files).toEqual(a.files)
  })

  it("the first commit of an empty repository and an amend are the same on both backends", async () => {
    const start = Repo.create("git-write-empty-")
    made.push(start)
    start.git("config", "user.name", "Ada Lovelace")
    start.git("config", "user.email", "ada@example.com")
    start.write("one.txt", "one\n")
    const [native, iso] = [copy(start), copy(start)]
    const steps = (r: Repo, backend: "native" | "isomorphic") =>
      run(
        r.dir,
        backend,
        Effect.gen(function* () {
          yield* GitAdd.add.run({ paths: ["one.txt"] })
          const first = yield* GitCommit.commit.run({ message: "First" })
          r.write("one.txt", "one, amended\n")
          yield* GitAdd.add.run({ paths: ["one.txt"] })
          yield* TestClock.adjust("1 minute")
          const amended = yield* GitCommit.commit.run({ message: "First, amended", amend: true })
          return [first.commit!.hash, amended.commit!.hash] as const
        })
      )
    const a = await steps(native, "native")
    const b = await steps(iso, "isomorphic")
    expect(b).toEqual(a)
    expect(native.git("rev-list", "--count", "HEAD").trim()).toBe("1")
    // The amend keeps the author's date and moves the committer's.
    expect(native.git("log", "-1", "--format=%at %ct")).toBe(`${now / 1000} ${now / 1000 + 60}\n`)
  })

  describe.each(backends)("%s backend", (backend) => {
    it("committing with nothing staged is refused", async () => {
      const r = base()
      r.write("src/a.ts", "unstaged\n")
      const e = await fail(r.dir, backend, GitCommit.commit.run({ message: "Nothing" }))
      expect([e._tag, (e as { reason?: string }).reason]).toEqual(["GitWriteRefused", "nothing-staged"])
      expect(e.message).toContain("git.add")
    })

    it("a commit of a staged .env is refused, naming it, and nothing is committed", async () => {
      const r = base()
      const head = r.head()
      r.write(".env", "API_KEY=canary-not-a-secret\n")
      r.write("src/a.ts", "export const a = 3\n")
      // A person (or a shell) put it in the index; git.add itself refuses it.
      r.git("add", "-f", ".env", "src/a.ts")
      const e = await fail(r.dir, backend, GitCommit.commit.run({ message: "Leak" }))
      expect([e._tag, (e as { names?: ReadonlyArray<string> }).names]).toEqual(["GitWriteRefused", [".env"]])
      expect(e.message).toContain(".env")
      expect(r.head()).toBe(head)
      const added = await fail(r.dir, backend, GitAdd.add.run({ paths: ["config/../.env"] }))
      expect((added as { reason?: string }).reason).toBe("secret-staged")
      // Staging everything would take an untracked key with it: refused, naming it, and nothing is staged.
      r.git("reset", "-q")
      r.write("keys/deploy.pem", "canary\n")
      const all = await fail(r.dir, backend, GitAdd.add.run({ paths: ["."] }))
      expect((all as { names?: ReadonlyArray<string> }).names).toEqual([".env", "keys/deploy.pem"])
      expect(r.git("diff", "--cached", "--name-only")).toBe("")
    })

    it("an amend of a pushed commit is refused, naming the remote-tracking branch", async () => {
      const r = base()
      r.git("update-ref", "refs/remotes/origin/main", "HEAD")
      const head = r.head()
      const e = await fail(r.dir, backend, GitCommit.commit.run({ message: "Rewrite", amend: true }))
      expect([e._tag, (e as { reason?: string }).reason]).toEqual(["GitWriteRefused", "amend-pushed"])
      expect(e.message).toContain("refs/remotes/origin/main")
      expect(r.head()).toBe(head)
      // A commit after it is not pushed: amending that one is allowed.
      r.write("src/a.ts", "export const a = 9\n")
      r.git("add", "src/a.ts")
      r.commitStaged("Local")
      const ok = await run(r.dir, backend, GitCommit.commit.run({ message: "Local, reworded", amend: true }))
      expect(ok.commit!.amended).toBe(true)
      expect(r.git("log", "-1", "--format=%s").trim()).toBe("Local, reworded")
    })

    it("an amend of someone else's commit is refused", async () => {
      const r = base()
      r.write("src/a.ts", "grace\n")
      r.git("add", "src/a.ts")
      r.gitAs({ GIT_AUTHOR_NAME: "Grace Hopper", GIT_AUTHOR_EMAIL: "grace@example.com" }, "commit", "-q", "-m", "Hers")
      const e = await fail(r.dir, backend, GitCommit.commit.run({ message: "Mine now", amend: true }))
      expect((e as { reason?: string }).reason).toBe("amend-author")
      expect(e.message).toContain("grace@example.com")
    })

    it("no configured user, an empty message: refused before anything is written", async () => {
      const r = base()
      r.git("config", "--unset", "user.name")
      r.write("src/a.ts", "x\n")
      r.git("add", "src/a.ts")
      expect(((await fail(r.dir, backend, GitCommit.commit.run({ message: "x" }))) as { reason?: string }).reason).toBe(
        "no-identity"
      )
      expect(
        ((await fail(r.dir, backend, GitCommit.commit.run({ message: " \n\n" }))) as { reason?: string }).reason
      ).toBe("invalid-message")
    })

    it("a branch is created, never overwritten; a bad name is refused before git sees it", async () => {
      const r = base()
      const made = await run(r.dir, backend, GitBranch.branch.run({ name: "feature/x" }))
      expect(made.at).toBe(r.head())
      expect(made.branches).toEqual(["feature/x", "main"])
      const again = await fail(r.dir, backend, GitBranch.branch.run({ name: "feature/x" }))
      expect((again as { reason?: string }).reason).toBe("branch-exists")
      for (const name of ["--force", "a..b", "x.lock", "a b", "@{-1}", "HEAD"]) {
        const bad = await fail(r.dir, backend, GitBranch.branch.run({ name }))
        expect((bad as { reason?: string }).reason).toBe("invalid-branch-name")
      }
    })

    it("a switch with changes in the way is refused, naming them; a clean one switches", async () => {
      const r = base()
      r.git("checkout", "-q", "-b", "other")
      r.write("src/a.ts", "export const a = 'other'\n")
      r.write("only-other.txt", "other\n")
      r.commit("On other")
      r.git("checkout", "-q", "main")
      r.write("src/a.ts", "uncommitted\n")
      const e = await fail(r.dir, backend, GitSwitch.switchBranch.run({ branch: "other" }))
      expect([(e as { reason?: string }).reason, (e as { names?: ReadonlyArray<string> }).names]).toEqual([
        "changes-in-the-way",
        ["src/a.ts"]
      ])
      r.git("checkout", "-q", "--", "src/a.ts")
      r.write("only-other.txt", "an untracked file the branch has\n")
      const untracked = await fail(r.dir, backend, GitSwitch.switchBranch.run({ branch: "other" }))
      expect((untracked as { names?: ReadonlyArray<string> }).names).toEqual(["only-other.txt"])
      r.remove("only-other.txt")
      const done = await run(r.dir, backend, GitSwitch.switchBranch.run({ branch: "other" }))
      expect(done.status.branch).toBe("other")
      expect(r.read("src/a.ts")).toBe("export const a = 'other'\n")
      expect(r.read("only-other.txt")).toBe("other\n")
      const created = await run(r.dir, backend, GitSwitch.switchBranch.run({ branch: "next", create: true }))
      expect(created.status.branch).toBe("next")
      const missing = await fail(r.dir, backend, GitSwitch.switchBranch.run({ branch: "nowhere" }))
      expect((missing as { reason?: string }).reason).toBe("no-such-branch")
    })

    it("a stash puts changes aside and brings them back; nothing to stash is refused", async () => {
      const r = base()
      r.write("src/a.ts", "export const a = 'stashed'\n")
      r.write("untracked.txt", "left alone\n")
      const before = tree(r.dir)
      const pushed = await run(r.dir, backend, GitStash.stash.run({ action: "push", message: "wip" }))
      expect(pushed.entries.length).toBe(1)
      expect(r.read("src/a.ts")).toBe("export const a = 1\n")
      expect(r.read("untracked.txt")).toBe("left alone\n")
      const nothing = await fail(r.dir, backend, GitStash.stash.run({ action: "push" }))
      expect((nothing as { reason?: string }).reason).toBe("nothing-to-stash")
      const popped = await run(r.dir, backend, GitStash.stash.run({ action: "pop" }))
      expect(popped.entries.length).toBe(0)
      expect(tree(r.dir)).toEqual(before)
      const none = await fail(r.dir, backend, GitStash.stash.run({ action: "pop" }))
      expect((none as { reason?: string }).reason).toBe("no-stash")
    })

    it("hooks from a core.hooksPath in the working tree are refused, never run or skipped", async () => {
      const r = base()
      const marker = path.join(r.dir, "hook-ran")
      r.write(".husky/pre-commit", `#!/bin/sh\ntouch '${marker}'\n`)
      fs.chmodSync(path.join(r.dir, ".husky/pre-commit"), 0o755)
      r.git("config", "core.hooksPath", ".husky")
      r.write("src/a.ts", "x\n")
      r.git("add", "src/a.ts")
      const head = r.head()
      const e = await fail(r.dir, backend, GitCommit.commit.run({ message: "Hooked" }))
      expect([(e as { reason?: string }).reason, (e as { names?: ReadonlyArray<string> }).names]).toEqual([
        "hooks-outside",
        [".husky/pre-commit"]
      ])
      expect(fs.existsSync(marker)).toBe(false)
      expect(r.head()).toBe(head)
    })

    it("a program the repository's config names (signing, an editor) never runs", async () => {
      const r = base()
      const marker = path.join(r.dir, "program-ran")
      r.write("prog.sh", `#!/bin/sh\ntouch '${marker}'\nexit 1\n`)
      fs.chmodSync(path.join(r.dir, "prog.sh"), 0o755)
      r.git("config", "commit.gpgSign", "true")
      r.git("config", "gpg.program", path.join(r.dir, "prog.sh"))
      r.git("config", "core.editor", path.join(r.dir, "prog.sh"))
      r.write("src/a.ts", "signed?\n")
      r.git("add", "src/a.ts")
      const done = await run(r.dir, backend, GitCommit.commit.run({ message: "Unsigned" }))
      expect(done.commit!.subject).toBe("Unsigned")
      expect(fs.existsSync(marker)).toBe(false)
      expect(r.git("cat-file", "commit", "HEAD")).not.toContain("gpgsig")
    })
  })

  it("native: a hook in .git/hooks runs (and its refusal stops the commit); isomorphic refuses it, never skips it", async () => {
    const r = base()
    const marker = path.join(r.dir, "hook-ran")
    const hook = path.join(r.dir, ".git/hooks/pre-commit")
    fs.writeFileSync(hook, `#!/bin/sh\necho ran >> '${marker}'\nexit 0\n`, { mode: 0o755 })
    r.write("src/a.ts", "hooked\n")
    r.git("add", "src/a.ts")
    const iso = await fail(r.dir, "isomorphic", GitCommit.commit.run({ message: "Hooked" }))
    expect([(iso as { reason?: string }).reason, (iso as { names?: ReadonlyArray<string> }).names]).toEqual([
      "hooks-unsupported",
      ["pre-commit"]
    ])
    expect(fs.existsSync(marker)).toBe(false)
    const done = await run(r.dir, "native", GitCommit.commit.run({ message: "Hooked" }))
    expect(fs.readFileSync(marker, "utf8")).toBe("ran\n")
    expect(done.commit!.subject).toBe("Hooked")
    fs.writeFileSync(hook, "#!/bin/sh\nexit 1\n", { mode: 0o755 })
    r.write("src/a.ts", "refused by the hook\n")
    r.git("add", "src/a.ts")
    const head = r.head()
    const refused = await fail(r.dir, "native", GitCommit.commit.run({ message: "Refused" }))
    expect([(refused as { reason?: string }).reason, (refused as { names?: ReadonlyArray<string> }).names]).toEqual([
      "hook-refused",
      ["pre-commit"]
    ])
    expect(r.head()).toBe(head)
  })

  it("a switch is a checkpoint: restoring it puts the working tree's files back", async () => {
    const r = base()
    r.git("checkout", "-q", "-b", "other")
    r.write("src/a.ts", "export const a = 'other'\n")
    r.remove("src/old.ts")
    r.commit("On other")
    r.git("checkout", "-q", "main")
    const before = tree(r.dir)
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const switched = yield* GitSwitch.switchBranch.run({ branch: "other" })
        expect(tree(r.dir)).not.toEqual(before)
        yield* Checkpoint.restore.run({ to: switched.checkpoint! })
        return switched
      }).pipe(Effect.provide(layers(r.dir, "native", true)))
    )
    expect(result.checkpoint).toBeTypeOf("string")
    expect(tree(r.dir)).toEqual(before)
  })

  it("native: a pop stopped by a conflict is refused, and its checkpoint takes back the file it wrote", async () => {
    const r = base()
    r.write("src/a.ts", "export const a = 'stashed'\n")
    r.git("stash", "push", "-q")
    r.write("src/a.ts", "export const a = 'committed'\n")
    r.git("add", "src/a.ts")
    r.commitStaged("Meanwhile")
    const restored = await Effect.runPromise(
      Effect.gen(function* () {
        const e = yield* Effect.flip(GitStash.stash.run({ action: "pop" }))
        expect([e._tag, (e as { reason?: string }).reason]).toEqual(["GitWriteRefused", "conflicted"])
        expect(r.read("src/a.ts")).toContain("<<<<<<<")
        const [newest] = yield* Checkpoints.list
        expect(newest!.files.map((f) => f.path)).toEqual(["src/a.ts"])
        return yield* Checkpoint.restore.run({ to: newest!.id })
      }).pipe(Effect.provide(layers(r.dir, "native", true)))
    )
    expect(restored.files.map((f) => f.path)).toEqual(["src/a.ts"])
    expect(r.read("src/a.ts")).toBe("export const a = 'committed'\n")
  })

  it("native: configuration in the server's environment (GIT_CONFIG_*) never reaches git", async () => {
    const r = base()
    const marker = path.join(r.dir, "env-hook-ran")
    const hooks = fs.mkdtempSync(path.join(r.dir, "..", "git-write-env-hooks-"))
    fs.writeFileSync(path.join(hooks, "pre-commit"), `#!/bin/sh\ntouch '${marker}'\n`, { mode: 0o755 })
    const saved = { ...process.env }
    Object.assign(process.env, {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "core.hooksPath",
      GIT_CONFIG_VALUE_0: hooks,
      GIT_CONFIG_PARAMETERS: `'core.hooksPath'='${hooks}'`,
      GIT_DIR: path.join(hooks, "elsewhere")
    })
    try {
      r.write("src/a.ts", "env\n")
      r.git("add", "src/a.ts")
      const done = await run(r.dir, "native", GitCommit.commit.run({ message: "Env" }))
      expect(done.commit!.hash).toBe(r.head())
      expect(fs.existsSync(marker)).toBe(false)
    } finally {
      for (const k of [
        "GIT_CONFIG_COUNT",
        "GIT_CONFIG_KEY_0",
        "GIT_CONFIG_VALUE_0",
        "GIT_CONFIG_PARAMETERS",
        "GIT_DIR"
      ])
        delete process.env[k]
      Object.assign(process.env, saved)
      fs.rmSync(hooks, { recursive: true, force: true })
    }
  })

  it("a linked worktree inside the workspace: native git.status reads it (its links were folded to /proc/self/.git) and a commit lands on its branch; the isomorphic backend refuses the write", async () => {
    const r = base()
    r.git("worktree", "add", "-q", "-b", "side", "wt")
    r.write("wt/side.txt", "side\n")
    const main = r.head()
    const read = await run(r.dir, "native", GitStatus.status.run({ repository: "wt" }))
    expect([read.branch, read.untracked]).toEqual(["side", ["side.txt"]])
    const done = await run(
      r.dir,
      "native",
      Effect.gen(function* () {
        yield* GitAdd.add.run({ repository: "wt", paths: ["wt/side.txt"] })
        return yield* GitCommit.commit.run({ repository: "wt", message: "On the side" })
      })
    )
    expect(done.commit!.branch).toBe("side")
    expect(r.git("rev-parse", "side").trim()).toBe(done.commit!.hash)
    expect(r.head()).toBe(main)
    r.write("wt/side.txt", "side, again\n")
    const iso = await fail(r.dir, "isomorphic", GitAdd.add.run({ repository: "wt", paths: ["wt/side.txt"] }))
    expect((iso as { reason?: string }).reason).toBe("linked-worktree")
  })

  it("a commit through a .git file that points outside the workspace is refused", async () => {
    const outside = base("git-write-outside-")
    const inside = Repo.create("git-write-inside-")
    made.push(inside)
    fs.rmSync(path.join(inside.dir, ".git"), { recursive: true, force: true })
    fs.writeFileSync(path.join(inside.dir, ".git"), `gitdir: ${path.join(outside.dir, ".git")}\n`)
    const head = outside.head()
    const e = await fail(inside.dir, "native", GitCommit.commit.run({ message: "Escape" }))
    expect(e._tag).toBe("NotARepository")
    expect(outside.head()).toBe(head)
  })
})
