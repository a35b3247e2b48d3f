/**
 * Each git tool, on each backend, against what the git CLI itself reports on
 * the same repository. The CLI output is read by small parsers written here,
 * independently of the native backend's.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Trust } from "@ugent/core"
import { GitAdd, GitBlame, GitCommit, GitDiff, GitLog, GitShow, GitStatus } from "@ugent/tools"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import {
  backends,
  gitGate,
  historyRepo,
  layerFor,
  Repo,
  randomHistory,
  randomRenames,
  runWith,
  workingChanges
} from "./fixtures.ts"

const gate = gitGate()

// ---------------------------------------------------------------------------
// Independent parsers of git's own output
// ---------------------------------------------------------------------------

interface CliCommit {
  hash: string
  parents: Array<string>
  author: string
  email: string
  date: string
  committer: string
  committerDate: string
  subject: string
  message: string
}

const cliLog = (r: Repo, args: ReadonlyArray<string>): Array<CliCommit> => {
  const out = r.git("log", "--format=%H%x00%P%x00%aN%x00%aE%x00%aI%x00%cN%x00%cI%x00%s%x00%B%x1e", ...args)
  return out
    .split("\x1e")
    .map((s) => s.replace(/^\n/, ""))
    .filter((s) => s !== "")
    .map((rec) => {
      const [hash, parents, author, email, date, committer, committerDate, subject, message] = rec.split("\0")
      return {
        hash: hash!,
        parents: parents === "" ? [] : parents!.split(" "),
        author: author!,
        email: email!,
        date: date!,
        committer: committer!,
        committerDate: committerDate!,
        subject: subject!,
        message: message!.replace(/\n+$/, "")
      }
    })
}

interface NumstatEntry {
  path: string
  additions: number
  deletions: number
  binary: boolean
}

const parseNumstatZ = (out: string): Array<NumstatEntry> => {
  const tokens = out.split("\0")
  const entries: Array<NumstatEntry> = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!.replace(/^\n/, "")
    if (t === "") continue
    const [a, d, p] = t.split("\t")
    let file = p!
    if (file === "") {
      i += 2
      file = tokens[i]!
    }
    entries.push({
      path: file,
      additions: a === "-" ? 0 : Number(a),
      deletions: d === "-" ? 0 : Number(d),
      binary: a === "-"
    })
  }
  return entries
}

/** `git diff-tree` numstat of a commit against its first parent (the empty tree for a root). */
const cliCommitNumstat = (r: Repo, c: CliCommit): Array<NumstatEntry> =>
  parseNumstatZ(
    c.parents.length === 0
      ? r.git("diff-tree", "-r", "-M", "--numstat", "-z", "--root", "--no-commit-id", c.hash)
      : r.git("diff-tree", "-r", "-M", "--numstat", "-z", "--no-commit-id", c.parents[0]!, c.hash)
  )

interface NameStatus {
  status: string
  path: string
  oldPath?: string
}

const parseNameStatusZ = (out: string): Array<NameStatus> => {
  const tokens = out.split("\0").filter((t) => t !== "")
  const entries: Array<NameStatus> = []
  for (let i = 0; i < tokens.length; i++) {
    const letter = tokens[i]!.charAt(0)
    if (letter === "R" || letter === "C") {
      entries.push({ status: letter, oldPath: tokens[i + 1]!, path: tokens[i + 2]! })
      i += 2
    } else {
      entries.push({ status: letter, path: tokens[i + 1]! })
      i += 1
    }
  }
  return entries
}

const statusWord: Record<string, string> = { A: "added", D: "deleted", M: "modified", R: "renamed", T: "typechange" }

interface CliHunk {
  header: string
  lines: Array<string>
}

/** Splits `git diff` text into per-file lists of hunks, in order (a typechange prints two sections). */
const parseUnified = (out: string): Array<Array<CliHunk>> => {
  const files: Array<Array<CliHunk>> = []
  let hunks: Array<CliHunk> | undefined
  let hunk: CliHunk | undefined
  for (const line of out.split("\n")) {
    if (line.startsWith("diff --git ")) {
      hunks = []
      files.push(hunks)
      hunk = undefined
    } else if (line.startsWith("@@ ") && hunks !== undefined) {
      hunk = { header: line.replace(/^(@@ [^@]* @@).*$/, "$1"), lines: [] }
      hunks.push(hunk)
    } else if (hunk !== undefined && /^[ +\-\\]/.test(line)) {
      hunk.lines.push(line)
    }
  }
  return files
}

/** Our hunks printed the way git prints them, to compare with git's text. */
const printHunks = (hunks: ReadonlyArray<GitDiff.Hunk>): Array<CliHunk> =>
  hunks.map((h) => {
    const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`)
    const lines: Array<string> = []
    for (const l of h.lines) {
      lines.push(`${l.type === "context" ? " " : l.type === "add" ? "+" : "-"}${l.content}`)
      if (l.noNewlineAtEnd === true) lines.push("\\ No newline at end of file")
    }
    return { header: `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`, lines }
  })

/** What git says a diff is: files with status, counts and hunks. */
const cliDiff = (r: Repo, args: ReadonlyArray<string>, flags: ReadonlyArray<string> = []) => {
  const names = parseNameStatusZ(r.git("diff", "--name-status", "-z", "-M", ...flags, ...args))
  const nums = parseNumstatZ(r.git("diff", "--numstat", "-z", "-M", ...flags, ...args))
  const sections = parseUnified(r.git("diff", "--no-color", "-M", ...flags, ...args))
  let s = 0
  return names.map((n, i) => {
    const hunks = n.status === "T" ? [...sections[s]!, ...sections[s + 1]!] : sections[s]!
    s += n.status === "T" ? 2 : 1
    return {
      path: n.path,
      oldPath: n.oldPath,
      status: statusWord[n.status],
      additions: nums[i]!.additions,
      deletions: nums[i]!.deletions,
      binary: nums[i]!.binary,
      hunks
    }
  })
}

const ourDiff = (files: ReadonlyArray<GitDiff.FileDiff>) =>
  files.map((f) => ({
    path: f.path,
    oldPath: f.oldPath,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    binary: f.binary,
    hunks: printHunks(f.hunks)
  }))

interface CliBlameLine {
  hash: string
  orig: number
  final: number
  author: string
  email: string
  time: number
  tz: string
  summary: string
  filename: string
  text: string
}

const cliBlame = (r: Repo, args: ReadonlyArray<string>): Array<CliBlameLine> => {
  const out = r.git("-c", "core.quotePath=false", "blame", "--line-porcelain", ...args)
  const result: Array<CliBlameLine> = []
  const lines = out.split("\n")
  let i = 0
  while (i < lines.length && lines[i] !== "") {
    const [hash, orig, final] = lines[i]!.split(" ")
    const fields: Record<string, string> = {}
    i++
    while (!lines[i]!.startsWith("\t")) {
      const l = lines[i]!
      const sp = l.indexOf(" ")
      fields[sp === -1 ? l : l.slice(0, sp)] = sp === -1 ? "" : l.slice(sp + 1)
      i++
    }
    result.push({
      hash: hash!,
      orig: Number(orig),
      final: Number(final),
      author: fields.author!,
      email: fields["author-mail"]!.replace(/^<|>$/g, ""),
      time: Number(fields["author-time"]),
      tz: fields["author-tz"]!,
      summary: fields.summary!,
      filename: fields.filename!,
      text: lines[i]!.slice(1)
    })
    i++
  }
  return result
}

const isoOf = (seconds: number, tz: string) => {
  const sign = tz.startsWith("-") ? -1 : 1
  const minutes = sign * (Number(tz.slice(1, 3)) * 60 + Number(tz.slice(3, 5)))
  const d = new Date((seconds + minutes * 60) * 1000).toISOString().slice(0, 19)
  return `${d}${tz.slice(0, 3)}:${tz.slice(3)}`
}

const cliStatus = (r: Repo) => {
  const tokens = r.git("status", "--porcelain=v1", "-z", "-uall", "--find-renames").split("\0")
  const staged: Array<{ path: string; status: string; oldPath?: string }> = []
  const unstaged: Array<{ path: string; status: string }> = []
  const untracked: Array<string> = []
  const conflicted: Array<string> = []
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!
    if (t === "") continue
    const x = t[0]!
    const y = t[1]!
    const p = t.slice(3)
    if (x === "?") untracked.push(p)
    else if (x === "U" || y === "U" || (x === "A" && y === "A") || (x === "D" && y === "D")) conflicted.push(p)
    else {
      if (x !== " ") {
        const oldPath = x === "R" ? tokens[++i] : undefined
        staged.push({ path: p, status: statusWord[x]!, ...(oldPath === undefined ? {} : { oldPath }) })
      }
      if (y !== " ") unstaged.push({ path: p, status: statusWord[y]! })
    }
  }
  return { staged, unstaged, untracked, conflicted }
}

// ---------------------------------------------------------------------------

describe.skipIf(gate.skip)(`git tools agree with the git CLI${gate.note}`, () => {
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
    describe("git.log", () => {
      const check = async (r: Repo, input: GitLog.Input, cliArgs: ReadonlyArray<string>) => {
        const out = await runWith(r.dir, backend, GitLog.log.run(input))
        const limit = input.limit ?? GitLog.defaultLimit
        const cli = cliLog(r, [`-n${limit + 1}`, "--diff-merges=first-parent", "-s", ...cliArgs])
        expect(out.truncated).toBe(cli.length > limit)
        const expected = cli.slice(0, limit)
        expect(out.commits.map((c) => c.hash)).toEqual(expected.map((c) => c.hash))
        for (const [i, c] of out.commits.entries()) {
          const e = expected[i]!
          expect({ ...c, filesChanged: undefined, stats: undefined, diff: undefined, shortHash: undefined }).toEqual({
            ...e,
            filesChanged: undefined,
            stats: undefined,
            diff: undefined,
            shortHash: undefined
          })
          const nums = cliCommitNumstat(r, e)
          expect(c.filesChanged, c.subject).toBe(nums.length)
          expect(c.stats).toEqual({
            additions: nums.reduce((n, x) => n + x.additions, 0),
            deletions: nums.reduce((n, x) => n + x.deletions, 0)
          })
        }
        return out
      }

      it("lists the last commits with metadata and numstat", () => check(history, { limit: 10 }, ["HEAD"]))
      it("walks all 40 commits through a merge", () => check(history, { limit: 100 }, ["HEAD"]))
      it("limits to a directory (merges kept when they changed it)", () =>
        check(history, { path: "src", limit: 50 }, ["HEAD", "--", "src"]))
      it("limits to a file through renames' old paths", () =>
        check(history, { path: "docs/guide.md" }, ["HEAD", "--", "docs/guide.md"]))
      it("limits to a file touched on both sides of a merge", () =>
        check(history, { path: "README.md" }, ["HEAD", "--", "README.md"]))
      it("filters by author through the mailmap, ignoring ASCII case", () =>
        check(history, { author: "GRACE", limit: 50 }, ["HEAD", "-F", "-i", "--author=GRACE"]))
      it("filters by message text", () =>
        check(history, { grep: "Fix:", limit: 50 }, ["HEAD", "-F", "-i", "--grep=Fix:"]))
      it("filters by author and message together", () =>
        check(history, { grep: "long", author: "ada", limit: 50 }, ["HEAD", "-F", "-i", "--author=ada", "--grep=long"]))
      it("filters by a date window", () =>
        check(history, { since: "2024-01-01T00:10:00Z", until: "2024-01-01T00:20:00Z", limit: 50 }, [
          "HEAD",
          "--since-as-filter=2024-01-01T00:10:00Z",
          "--until=2024-01-01T00:20:00Z"
        ]))
      it("starts from another revision", () => check(history, { rev: "feature", limit: 50 }, ["feature"]))
      it("includes each commit's diff on request", async () => {
        const out = await check(history, { includeDiff: true, limit: 8 }, ["HEAD"])
        for (const c of out.commits) {
          const expected = cliDiff(history, [c.parents[0] ?? "4b825dc642cb6eb9a060e54bf8d69288fbee4904", c.hash])
          expect(ourDiff(c.diff?.files ?? []), c.subject).toEqual(expected)
        }
      })
    })

    describe("git.diff", () => {
      const check = async (
        r: Repo,
        input: GitDiff.Input,
        cliArgs: ReadonlyArray<string>,
        flags: ReadonlyArray<string> = []
      ) => {
        const out = await runWith(r.dir, backend, GitDiff.diff.run({ maxDiffSize: 10_000_000, ...input }))
        expect(ourDiff(out.files)).toEqual(cliDiff(r, cliArgs, flags))
        expect(out.stats.filesChanged).toBe(out.files.length)
        return out
      }

      it("compares the working tree with HEAD", () => check(working, {}, ["HEAD"]))
      it("compares the index with HEAD", () => check(working, { staged: true }, ["--cached", "HEAD"]))
      it("compares two commits across renames, binary, mode and type changes", () =>
        check(history, { base: "HEAD~30", compare: "HEAD" }, ["HEAD~30", "HEAD"]))
      it("compares the root commit with HEAD", async () => {
        const root = history.git("rev-list", "--max-parents=0", "HEAD").trim()
        await check(history, { base: root, compare: "HEAD" }, [root, "HEAD"])
      })
      it("pairs renames as git does (exact, empty, same basename, edited)", async () => {
        for (const seed of [2, 5, 9]) {
          const r = randomRenames(seed)
          try {
            await check(r, { staged: true }, ["--cached", "HEAD"])
            const status = await runWith(r.dir, backend, GitStatus.status.run({}))
            expect(status.staged).toEqual(cliStatus(r).staged)
          } finally {
            r.dispose()
          }
        }
      })
      it("limits to paths", () =>
        check(history, { base: "HEAD~30", compare: "HEAD", paths: ["src", "README.md"] }, [
          "HEAD~30",
          "HEAD",
          "--",
          "src",
          "README.md"
        ]))
      it("honours the context width", () =>
        check(history, { base: "HEAD~10", compare: "HEAD", contextLines: 0 }, ["HEAD~10", "HEAD"], ["-U0"]))
      it("ignores whitespace on request", () => check(working, { ignoreWhitespace: true }, ["HEAD"], ["-w"]))
      it("compares tags, and names the revisions compared", async () => {
        const out = await check(history, { base: "v1.0", compare: "v1.1" }, ["v1.0", "v1.1"])
        expect([out.base, out.compare]).toEqual(["v1.0", "v1.1"])
      })
    })

    describe("git.blame", () => {
      const check = async (r: Repo, input: GitBlame.Input, cliArgs: ReadonlyArray<string>) => {
        const out = await runWith(r.dir, backend, GitBlame.blame.run(input))
        const cli = cliBlame(r, cliArgs)
        expect(out.lines.map((l) => l.line)).toEqual(cli.map((l) => l.final))
        expect(
          out.lines.map((l) => ({
            hash: l.commit?.hash ?? "0000000000000000000000000000000000000000",
            orig: l.originalLine,
            author: l.commit?.author ?? "Not Committed Yet",
            summary: l.commit?.message,
            filename: l.originalPath,
            text: l.text,
            date: l.commit?.date
          }))
        ).toEqual(
          cli.map((l) => ({
            hash: l.hash,
            orig: l.orig,
            author: l.author,
            summary: /^0+$/.test(l.hash) ? undefined : l.summary,
            filename: l.filename,
            text: l.text,
            date: /^0+$/.test(l.hash) ? undefined : isoOf(l.time, l.tz)
          }))
        )
        return out
      }

      it("blames a long-lived file", () =>
        check(history, { path: "src/long.ts", rev: "HEAD" }, ["HEAD", "--", "src/long.ts"]))
      it("follows a rename with edits", () =>
        check(history, { path: "src/helpers.ts", rev: "HEAD" }, ["HEAD", "--", "src/helpers.ts"]))
      it("credits lines through a merge", () =>
        check(history, { path: "src/main.ts", rev: "HEAD" }, ["HEAD", "--", "src/main.ts"]))
      it("blames the working tree, with uncommitted lines", () =>
        check(working, { path: "src/main.ts" }, ["--", "src/main.ts"]))
      it("follows a staged rename in the working tree", () =>
        check(working, { path: "docs/manual.md" }, ["--", "docs/manual.md"]))
      it("blames a line range at an older revision", () =>
        check(history, { path: "src/long.ts", rev: "HEAD~4", startLine: 10, endLine: 25 }, [
          "-L",
          "10,25",
          "HEAD~4",
          "--",
          "src/long.ts"
        ]))
      it("blames random histories with merges, conflicts and renames as git does", async () => {
        for (const seed of [3, 17, 29]) {
          const { repo, file } = randomHistory(seed)
          try {
            await check(repo, { path: file, rev: "HEAD" }, ["HEAD", "--", file])
          } finally {
            repo.dispose()
          }
        }
      })

      it("blames unicode and space-containing names", async () => {
        await check(history, { path: "日本語/ファイル.md", rev: "HEAD" }, ["HEAD", "--", "日本語/ファイル.md"])
        await check(history, { path: "no-newline.txt", rev: "HEAD" }, ["HEAD", "--", "no-newline.txt"])
      })
    })

    describe("git.status", () => {
      it("reports staged, unstaged and untracked files as git does", async () => {
        const out = await runWith(working.dir, backend, GitStatus.status.run({}))
        const cli = cliStatus(working)
        expect(out.staged).toEqual(cli.staged)
        expect(out.unstaged).toEqual(cli.unstaged)
        expect(out.untracked).toEqual(cli.untracked)
        expect(out.conflicted).toEqual(cli.conflicted)
        expect(out.branch).toBe(working.git("symbolic-ref", "--short", "HEAD").trim())
        expect(out.head).toBe(working.head())
        expect(out.clean).toBe(false)
      })

      it("reports a clean tree as clean", async () => {
        const out = await runWith(history.dir, backend, GitStatus.status.run({}))
        expect(cliStatus(history)).toEqual({ staged: [], unstaged: [], untracked: [], conflicted: [] })
        expect(out).toMatchObject({ clean: true, staged: [], unstaged: [], untracked: [], conflicted: [] })
      })
    })

    describe("git.show", () => {
      it("shows a commit and its diff against the first parent", async () => {
        for (const rev of ["HEAD", "HEAD~25", "HEAD~27", "v1.1"]) {
          const out = await runWith(history.dir, backend, GitShow.show.run({ rev }))
          const [c] = cliLog(history, ["-1", rev])
          expect(out.commit.hash).toBe(c!.hash)
          expect(out.commit.subject).toBe(c!.subject)
          const base = c!.parents[0] ?? "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
          expect(ourDiff(out.diff?.files ?? []), rev).toEqual(cliDiff(history, [base, c!.hash]))
          expect(out.commit.filesChanged).toBe(cliCommitNumstat(history, c!).length)
        }
      })

      it("shows the root commit against the empty tree", async () => {
        const root = history.git("rev-list", "--max-parents=0", "HEAD").trim()
        const out = await runWith(history.dir, backend, GitShow.show.run({ rev: root }))
        expect(ourDiff(out.diff?.files ?? [])).toEqual(
          cliDiff(history, ["4b825dc642cb6eb9a060e54bf8d69288fbee4904", root])
        )
      })
    })
  })
})

// ---------------------------------------------------------------------------
// git.commit: the same commit object on both backends and from the git CLI
// ---------------------------------------------------------------------------

/** 2024-03-01T12:00:00Z, the time of every commit below. */
const commitTime = 1_709_294_400_000

/** Seeded working-tree changes of every kind a commit records: edits, removals, new nested, binary, empty and executable files, links. */
const randomChanges = (r: Repo, seed: number): void => {
  let s = seed
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
  const tracked = r
    .git("ls-files", "-z")
    .split("\0")
    .filter((p) => p !== "" && !fs.lstatSync(path.join(r.dir, p)).isSymbolicLink())
  for (const file of tracked) {
    const x = rand()
    if (x < 0.15) r.remove(file)
    else if (x < 0.35) r.write(file, `${r.read(file)}edited ${seed}\n`)
    else if (x < 0.4) fs.chmodSync(path.join(r.dir, file), 0o755)
  }
  const names = ["new.txt", "deep/er/still.md", "ünï cödé/ß.txt", "empty", "bin/blob.bin", "tools/run.sh"]
  for (const [i, name] of names.entries()) {
    if (rand() < 0.3) continue
    r.write(
      name,
      name === "empty" ? "" : name.endsWith(".bin") ? Uint8Array.from([0, i, 255, seed % 256, 0]) : `${name} ${seed}\n`
    )
    if (name.endsWith(".sh")) fs.chmodSync(path.join(r.dir, name), 0o755)
  }
  if (rand() < 0.7) fs.symlinkSync("README.md", path.join(r.dir, `link-${seed}`))
}

describe.skipIf(gate.skip)(`git.commit agrees with the git CLI${gate.note}`, () => {
  const made: Array<Repo> = []
  afterAll(() => {
    for (const r of made) r.dispose()
  })
  const copyOf = (r: Repo): Repo => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), "git-commit-diff-")))
    fs.cpSync(r.dir, dir, { recursive: true, verbatimSymlinks: true })
    const c = new Repo(dir)
    made.push(c)
    return c
  }

  it.each([1, 2, 3, 4])("seed %i: both backends make the commit git makes, hash for hash", async (seed) => {
    const start = historyRepo()
    made.push(start)
    start.git("config", "user.name", "Ada Lovelace")
    start.git("config", "user.email", "ada@example.com")
    const [native, iso, cli] = [copyOf(start), copyOf(start), copyOf(start)]
    for (const r of [native, iso, cli]) randomChanges(r, seed)
    const message = `Random changes ${seed}\n\nEvery kind of file a commit records.`
    const commitWith = (r: Repo, backend: "native" | "isomorphic") =>
      Effect.runPromise(
        Effect.gen(function* () {
          yield* TestClock.setTime(commitTime)
          yield* GitAdd.add.run({ paths: ["."] })
          return yield* GitCommit.commit.run({ message })
        }).pipe(Effect.provide(Layer.mergeAll(layerFor(r.dir, backend), Trust.grant(3), TestClock.layer())))
      )
    const a = await commitWith(native, "native")
    const b = await commitWith(iso, "isomorphic")
    cli.git("add", "-A")
    const date = `@${commitTime / 1000} +0000`
    execFileSync("git", ["commit", "-q", "--no-verify", "-F", "-"], {
      cwd: cli.dir,
      input: `${message}\n`,
      env: { ...cli.env(), GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }
    })
    expect(a.commit!.hash).toBe(cli.head())
    expect(b.commit!.hash).toBe(cli.head())
    expect(b.files).toEqual(a.files)
    expect([a.status.clean, b.status.clean]).toEqual([true, true])
  })
})
