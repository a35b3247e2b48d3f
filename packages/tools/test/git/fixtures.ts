/**
 * Test fixtures for the git tools: repositories built with the git CLI in
 * temporary directories, with fixed identities and dates so every run builds
 * the same objects. Builders cover what the tools must handle: merges,
 * renames (exact and edited), binary files, unicode and space-containing
 * names, a name that looks like an option, many commits (through
 * `git fast-import`), an empty repository, a detached HEAD, every kind of
 * working-tree change, a conflict, and malicious ref names.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { Trust } from "@ugent/core"
import { GitBackend, Workspace } from "@ugent/tools"
import { Effect, Layer } from "effect"

/** Whether the git CLI runs here. */
export const hasGit: boolean = spawnSync("git", ["--version"]).status === 0

/**
 * Tests that need git skip visibly when it is missing locally, and fail when
 * `CI` is set (git is part of the CI image).
 */
export const gitGate = (): { readonly skip: boolean; readonly note: string } => {
  if (hasGit) return { skip: false, note: "" }
  if (process.env.CI !== undefined) throw new Error("git is required in CI but is not on PATH")
  console.warn("git tests skipped: the git binary is not on PATH")
  return { skip: true, note: " (skipped: git not installed)" }
}

const BASE_TIME = 1_704_067_200 // 2024-01-01T00:00:00Z

/** A repository under construction (and later read by the tests). */
export class Repo {
  readonly dir: string
  private clock = 0

  constructor(dir: string) {
    this.dir = dir
  }

  static create(prefix = "git-fixture-"): Repo {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), prefix)))
    const repo = new Repo(dir)
    repo.git("init", "-q", "-b", "main")
    return repo
  }

  /** The environment every fixture command runs in: no user config, fixed identity and time. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const date = `@${BASE_TIME + this.clock * 60} +0000`
    return {
      PATH: process.env.PATH,
      HOME: this.dir,
      LC_ALL: "C",
      TZ: "UTC",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "Ada Lovelace",
      GIT_AUTHOR_EMAIL: "ada@example.com",
      GIT_COMMITTER_NAME: "Ada Lovelace",
      GIT_COMMITTER_EMAIL: "ada@example.com",
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
      ...extra
    }
  }

  /** Runs git in the repository and returns its stdout. */
  git(...args: ReadonlyArray<string>): string {
    return execFileSync("git", args, { cwd: this.dir, env: this.env(), encoding: "utf8", maxBuffer: 256 * 1024 * 1024 })
  }

  /** Runs git and returns stdout as bytes. */
  gitBytes(...args: ReadonlyArray<string>): Buffer {
    return execFileSync("git", args, { cwd: this.dir, env: this.env(), maxBuffer: 256 * 1024 * 1024 })
  }

  gitAs(env: Record<string, string>, ...args: ReadonlyArray<string>): string {
    return execFileSync("git", args, { cwd: this.dir, env: this.env(env), encoding: "utf8" })
  }

  /** Writes a raw object (for objects git would not create itself) and returns its id. */
  writeObject(type: string, body: string): string {
    return execFileSync("git", ["hash-object", "-t", type, "-w", "--stdin"], {
      cwd: this.dir,
      env: this.env(),
      input: body
    })
      .toString()
      .trim()
  }

  write(file: string, content: string | Uint8Array): this {
    const full = path.join(this.dir, file)
    fs.mkdirSync(path.dirname(full), { recursive: true })
    fs.writeFileSync(full, content)
    return this
  }

  read(file: string): string {
    return fs.readFileSync(path.join(this.dir, file), "utf8")
  }

  remove(file: string): this {
    fs.rmSync(path.join(this.dir, file), { recursive: true, force: true })
    return this
  }

  /** Stages everything and commits with the next fixed date. */
  commit(message: string, author?: { readonly name: string; readonly email: string }): string {
    this.clock++
    this.git("add", "-A")
    const who = author === undefined ? {} : { GIT_AUTHOR_NAME: author.name, GIT_AUTHOR_EMAIL: author.email }
    this.gitAs(who, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    return this.git("rev-parse", "HEAD").trim()
  }

  /** Commits only what is staged. */
  commitStaged(message: string): string {
    this.clock++
    this.git("commit", "-q", "--no-verify", "-m", message)
    return this.git("rev-parse", "HEAD").trim()
  }

  tick(): void {
    this.clock++
  }

  head(): string {
    return this.git("rev-parse", "HEAD").trim()
  }

  dispose(): void {
    fs.rmSync(this.dir, { recursive: true, force: true })
  }
}

const lines = (n: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => `${prefix} line ${i + 1}`).join("\n") + "\n"

/** A history with everything the tools must handle (no working-tree changes). */
export const historyRepo = (): Repo => {
  const r = Repo.create("git-history-")
  r.write("README.md", "# Project\n\nA test repository.\n")
  r.write("src/main.ts", 'export const main = () => {\n  console.log("hello")\n}\n')
  r.write("src/util.ts", lines(30, "util"))
  r.write("docs/guide.md", lines(12, "guide"))
  r.write("assets/logo.bin", Uint8Array.from([0, 1, 2, 3, 255, 0, 10, 13, 0, 42]))
  r.write("with space.txt", "spaces in the name\n")
  r.write("naïve café.txt", "unicode name\n")
  r.write("日本語/ファイル.md", "こんにちは\n")
  r.write("--output=x.txt", "a file whose name looks like an option\n")
  r.write("no-newline.txt", "first\nlast without newline")
  r.write("crlf.txt", "one\r\ntwo\r\nthree\r\n")
  r.write(".mailmap", "Ada Lovelace <ada@example.com> <ada@old.example.com>\n")
  r.commit("Initial commit\n\nSets up the project.\n")

  r.write("src/main.ts", 'export const main = () => {\n  console.log("hello, world")\n  return 0\n}\n')
  r.write("src/util.ts", lines(30, "util").replace("util line 10\n", "util line ten\n"))
  r.commit("Greet the world", { name: "Grace Hopper", email: "grace@example.com" })

  // Exact rename, and a rename with an edit.
  r.git("mv", "docs/guide.md", "docs/handbook.md")
  r.git("mv", "src/util.ts", "src/helpers.ts")
  r.write(
    "src/helpers.ts",
    lines(30, "util").replace("util line 10\n", "util line ten\n").replace("util line 20\n", "util line twenty\n")
  )
  r.commit("Rename the guide and the helpers")

  // A side branch merged back with changes on both sides.
  r.git("checkout", "-q", "-b", "feature")
  r.write("feature.txt", "feature work\n")
  r.write(
    "src/main.ts",
    'export const main = () => {\n  console.log("hello, world")\n  return 0\n}\n\nexport const extra = 1\n'
  )
  r.commit("Add the feature", { name: "Old Ada", email: "ada@old.example.com" })
  r.git("checkout", "-q", "main")
  r.write("README.md", "# Project\n\nA test repository.\n\nMore words.\n")
  r.commit("Extend the README")
  r.tick()
  r.gitAs({}, "merge", "-q", "--no-ff", "--no-edit", "-m", "Merge branch 'feature'", "feature")

  // Binary change, deletion, mode change, symlink, typechange.
  r.write("assets/logo.bin", Uint8Array.from([0, 9, 9, 9, 0, 1]))
  r.remove("with space.txt")
  r.write("run.sh", "#!/bin/sh\necho run\n")
  fs.chmodSync(path.join(r.dir, "run.sh"), 0o755)
  fs.symlinkSync("README.md", path.join(r.dir, "link-to-readme"))
  r.commit("Binary change, deletion, script and link")
  fs.chmodSync(path.join(r.dir, "run.sh"), 0o644)
  r.remove("link-to-readme")
  r.write("link-to-readme", "now a regular file\n")
  r.commit("Mode change and typechange")

  // A long-lived file with many small edits, and enough commits to pass log limits.
  for (let i = 1; i <= 25; i++) {
    const body = Array.from({ length: 40 }, (_, k) => (k % 5 === i % 5 ? `  edit ${i} at ${k}` : `line ${k}`)).join(
      "\n"
    )
    r.write("src/long.ts", `${body}\n`)
    if (i % 7 === 0) r.write(`notes/note-${i}.md`, `note ${i}\n`)
    r.commit(i % 3 === 0 ? `fix: tweak long (${i})` : `Edit long file ${i}`)
  }
  r.git("tag", "v1.0", "HEAD~5")
  r.git("tag", "-a", "v1.1", "-m", "annotated", "HEAD~2")
  return r
}

/** Working-tree changes of every kind on top of the history. */
export const workingChanges = (r: Repo): Repo => {
  r.write(".gitignore", "*.log\nbuild/\n")
  r.git("add", ".gitignore")
  r.write("staged-new.txt", "a new staged file\n")
  r.git("add", "staged-new.txt")
  r.write("README.md", `${r.read("README.md")}staged line\n`)
  r.git("add", "README.md")
  r.git("rm", "-q", "naïve café.txt")
  r.git("mv", "docs/handbook.md", "docs/manual.md")
  r.write("src/main.ts", `${r.read("src/main.ts")}// unstaged edit\n`)
  r.remove("crlf.txt")
  r.write("untracked.txt", "nobody added me\n")
  r.write("new dir/inner file.txt", "untracked in a new directory\n")
  r.write("debug.log", "ignored\n")
  r.write("build/out.js", "ignored directory\n")
  r.write("staged-new.txt", "a new staged file\nedited after staging\n")
  return r
}

/**
 * A seeded random history of one file: edits (deletions, insertions,
 * replacements from a small vocabulary full of repeated and blank lines),
 * side branches merged back (conflicts resolved by a fresh edit), and
 * sometimes a final rename. Returns the repository and the file's last path.
 */
export const randomHistory = (seed: number): { readonly repo: Repo; readonly file: string } => {
  let s = seed
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rand() * xs.length)]!
  const vocab = ["a", "b", "c", "{", "}", "", "  x", "    y", "return 0", "foo()", "bar()"]
  const r = Repo.create("git-random-")
  const write = (ls: ReadonlyArray<string>) => r.write("f.txt", `${ls.join("\n")}\n`)
  const mutate = (ls: ReadonlyArray<string>) => {
    const out: Array<string> = []
    for (const l of ls) {
      const x = rand()
      if (x < 0.1) continue
      if (x < 0.2) out.push(pick(vocab))
      out.push(x > 0.9 ? pick(vocab) : l)
      if (x > 0.95) out.push(pick(vocab))
    }
    return out.length > 0 ? out : ["z"]
  }
  let lines = Array.from({ length: 20 }, () => pick(vocab))
  write(lines)
  r.commit("init")
  for (let i = 0; i < 25; i++) {
    if (rand() < 0.25) {
      r.git("checkout", "-q", "-b", `b${i}`)
      write(mutate(lines))
      r.commit(`side ${i}`)
      r.git("checkout", "-q", "main")
      write([...lines, pick(vocab)])
      r.commit(`main ${i}`)
      r.tick()
      if (spawnSync("git", ["merge", "-q", "--no-edit", `b${i}`], { cwd: r.dir, env: r.env() }).status !== 0) {
        write(mutate(lines))
        r.git("add", "-A")
        r.git("commit", "-q", "--no-edit")
      }
      lines = r.read("f.txt").split("\n").slice(0, -1)
    } else {
      lines = mutate(lines)
      write(lines)
      r.commit(`edit ${i}`)
    }
  }
  if (rand() < 0.5) {
    r.git("mv", "f.txt", "g.txt")
    r.commit("rename")
    return { repo: r, file: "g.txt" }
  }
  return { repo: r, file: "f.txt" }
}

/**
 * A seeded batch of staged deletions and additions that git pairs as renames
 * in every way it can: exact copies (duplicates, empty files), same basenames
 * in another directory, and edited copies around the similarity thresholds.
 */
export const randomRenames = (seed: number): Repo => {
  let s = seed
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
  const r = Repo.create("git-renames-")
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`)
  const body = (n: number) =>
    `${Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join("\n")}\n`
  const names = [
    "a.txt",
    "b.txt",
    "dir/a.txt",
    "dir/c.txt",
    "x/y/z.md",
    "other.md",
    "e.txt",
    "empty1",
    "dup1.txt",
    "dup2.txt"
  ]
  const contents = new Map<string, string>()
  for (const n of names) {
    const c = n.startsWith("empty")
      ? ""
      : n.startsWith("dup")
        ? "same content\nhere\n"
        : body(5 + Math.floor(rand() * 30))
    contents.set(n, c)
    r.write(n, c)
  }
  r.commit("base")
  for (const n of names) if (rand() < 0.6) r.remove(n)
  for (const n of ["moved/a.txt", "b2.txt", "c.txt", "z.md", "new.md", "empty2", "dup3.txt", "renamed-e.txt"]) {
    const lines = contents.get(names[Math.floor(rand() * names.length)]!)!.split("\n")
    const edit = rand() < 0.3 ? 0 : 0.3 * rand()
    r.write(n, lines.map((l, i) => (rand() < edit ? `changed ${i}` : l)).join("\n"))
  }
  r.git("add", "-A")
  return r
}

/** A merge conflict in progress. */
export const conflictRepo = (): Repo => {
  const r = Repo.create("git-conflict-")
  r.write("shared.txt", "base\n")
  r.write("other.txt", "other\n")
  r.commit("base")
  r.git("checkout", "-q", "-b", "theirs")
  r.write("shared.txt", "theirs\n")
  r.commit("theirs")
  r.git("checkout", "-q", "main")
  r.write("shared.txt", "ours\n")
  r.commit("ours")
  r.tick()
  spawnSync("git", ["merge", "-q", "theirs"], { cwd: r.dir, env: r.env() })
  return r
}

/**
 * A repository of `commits` commits over `files` files, written with
 * `git fast-import` (seconds instead of minutes). File `f0000` is edited in
 * every tenth commit, so it has a long history; the others change in turn.
 */
export const generatedRepo = (options: {
  readonly commits: number
  readonly files: number
  readonly dir?: string
}): Repo => {
  const dir = options.dir ?? fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), "git-generated-")))
  fs.mkdirSync(dir, { recursive: true })
  const r = new Repo(dir)
  r.git("init", "-q", "-b", "main")
  const chunks: Array<string> = []
  const enc = new TextEncoder()
  let mark = 0
  const content = (file: number, version: number) => {
    const out: Array<string> = []
    for (let k = 0; k < 60; k++)
      out.push(k % 13 === version % 13 ? `edited ${version} ${file} ${k}` : `file ${file} line ${k}`)
    return `${out.join("\n")}\n`
  }
  const blob = (text: string) => {
    mark++
    const bytes = enc.encode(text)
    chunks.push(`blob\nmark :${mark}\ndata ${bytes.length}\n${text}\n`)
    return mark
  }
  const name = (i: number) => `dir${String(i % 50).padStart(2, "0")}/f${String(i).padStart(4, "0")}.txt`
  let commitMark = 0
  const version = new Array<number>(options.files).fill(0)
  for (let c = 0; c < options.commits; c++) {
    const touched =
      c === 0
        ? Array.from({ length: options.files }, (_, i) => i)
        : [1 + ((c * 7) % (options.files - 1)), ...(c % 10 === 0 ? [0] : [])]
    const marks = touched.map((f) => {
      version[f] = c
      return [f, blob(content(f, c))] as const
    })
    mark++
    const when = BASE_TIME + c * 60
    const msg = `commit ${c}\n`
    chunks.push(
      `commit refs/heads/main\nmark :${mark}\nauthor Gen ${c % 5} <gen${c % 5}@example.com> ${when} +0000\ncommitter Gen <gen@example.com> ${when} +0000\ndata ${enc.encode(msg).length}\n${msg}` +
        (commitMark === 0 ? "" : `from :${commitMark}\n`) +
        marks.map(([f, m]) => `M 100644 :${m} ${name(f)}\n`).join("") +
        "\n"
    )
    commitMark = mark
  }
  execFileSync("git", ["fast-import", "--quiet"], { cwd: dir, env: r.env(), input: chunks.join("") })
  r.git("checkout", "-q", "-f", "main")
  return r
}

/** Layers to run the git tools on a repository: workspace at `root`, a backend, read-only trust. */
export const layerFor = (root: string, backend: "native" | "isomorphic") =>
  Layer.mergeAll(
    Workspace.layer({ root }).pipe(Layer.orDie),
    backend === "native" ? GitBackend.layerNative : GitBackend.layerIsomorphic,
    Trust.grant(0)
  )

/** Runs an effect that needs the git tools' services against a repository. */
export const runWith = <A, E>(
  root: string,
  backend: "native" | "isomorphic",
  effect: Effect.Effect<A, E, Workspace.Workspace | GitBackend.GitBackend | Trust.L0>
): Promise<A> => Effect.runPromise(Effect.provide(effect, layerFor(root, backend)))

/** The same, returning the failure instead of throwing. */
export const failureWith = <A, E>(
  root: string,
  backend: "native" | "isomorphic",
  effect: Effect.Effect<A, E, Workspace.Workspace | GitBackend.GitBackend | Trust.L0>
): Promise<E> => Effect.runPromise(Effect.provide(Effect.flip(effect), layerFor(root, backend)))

export const backends = ["native", "isomorphic"] as const

/** Any git tool call, for lists of different tools. */
export type Run = Effect.Effect<
  unknown,
  { readonly _tag: string; readonly message: string },
  Workspace.Workspace | GitBackend.GitBackend | Trust.L0
>
