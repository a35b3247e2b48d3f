/**
 * Folders and repositories for the report's tests, made by the test: plain
 * folders, git repositories whose commits carry the dates and authors the
 * test gives (so ages and areas are known), TODO markers, a DEVLOG. Every
 * folder is removed after the test.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterEach } from "vitest"

/** Whether git runs here. */
export const hasGit: boolean = spawnSync("git", ["--version"]).status === 0

/**
 * The marker words, spelled so that this file's own source holds no marker
 * (the report of this repository would otherwise list the tests' fixtures).
 */
export const TODO = ["TO", "DO"].join("")
export const FIXME = ["FIX", "ME"].join("")

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** An empty temp folder, removed after the test. */
export const emptyFolder = (): string => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "ugent-report-")))
  made.push(dir)
  return dir
}

/** Writes files (`null` deletes one) under a folder, making directories. */
export const writeFiles = (root: string, files: Readonly<Record<string, string | null>>): void => {
  for (const [name, content] of Object.entries(files)) {
    const file = join(root, name)
    if (content === null) unlinkSync(file)
    else {
      mkdirSync(dirname(file), { recursive: true })
      writeFileSync(file, content)
    }
  }
}

/** A folder with files, no repository. */
export const folder = (files: Readonly<Record<string, string>>): string => {
  const root = emptyFolder()
  writeFiles(root, files)
  return root
}

/** One commit of a fixture repository. */
export interface Commit {
  /** ISO 8601 date: author and committer date. */
  readonly date: string
  readonly author?: string
  readonly message: string
  /** Files written (or deleted with `null`) before the commit. */
  readonly files: Readonly<Record<string, string | null>>
}

/** Runs git in a repository with a fixed identity and no user configuration. */
export const git = (root: string, args: ReadonlyArray<string>, date?: string, author = "Ada Lovelace"): string =>
  execFileSync("git", args, {
    cwd: root,
    encoding: "utf8",
    env: {
      PATH: process.env.PATH,
      HOME: root,
      LC_ALL: "C",
      TZ: "UTC",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: author,
      GIT_AUTHOR_EMAIL: `${author.split(" ")[0]!.toLowerCase()}@example.com`,
      GIT_COMMITTER_NAME: author,
      GIT_COMMITTER_EMAIL: `${author.split(" ")[0]!.toLowerCase()}@example.com`,
      ...(date !== undefined ? { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } : {})
    }
  })

/** A repository on branch `main` with the given commits, oldest first. */
export const repository = (commits: ReadonlyArray<Commit>, root = emptyFolder()): string => {
  git(root, ["init", "-q", "-b", "main"])
  for (const c of commits) {
    writeFiles(root, c.files)
    git(root, ["add", "-A"], c.date, c.author)
    git(root, ["commit", "-q", "--allow-empty", "-m", c.message], c.date, c.author)
  }
  return root
}
