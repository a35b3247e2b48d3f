/**
 * The native backend: the `git` binary, spawned through `effect/process`
 * with an argument vector (never a shell), in a scrubbed environment.
 *
 * **What keeps the repository from steering git** (CVE-2025-58764 and its
 * kind, threats 18 and 33). The child sees only PATH and git variables: no
 * system or global config, no HOME, `GIT_DIR`/`GIT_WORK_TREE` set explicitly
 * (no discovery upwards), literal pathspecs, no optional locks (reads never
 * write the index), no replace refs. Git never reads the repository's own
 * configuration: `GIT_COMMON_DIR` names a private shadow directory whose
 * config holds only the keys that change how a repository is read (see
 * `shadow.ts`), so no include, hook, filter, textconv, pager, fsmonitor,
 * ignore-revs file, excludes or attributes file, mailmap, credential helper
 * or signing program named there exists for git. Configuration passed through
 * `GIT_CONFIG_COUNT` pins everything the parsers rely on; diffs run with
 * `--no-ext-diff --no-textconv`, submodules are ignored so no git runs inside
 * them. Revisions are checked against one grammar (no leading `-`), resolved
 * with `rev-parse --verify --end-of-options <rev>^{commit}`, and only the
 * resolved hashes reach the command; paths always follow `--`, and the blame
 * of the working tree reads the file through the workspace and hands its
 * bytes to git (`--contents -`), so git never opens a working-tree path.
 *
 * **git's words never reach a result.** Its standard error is only matched
 * against known messages to classify a failure; `GitFailed` carries one of a
 * few fixed phrases (see {@link reasonOf}), since stderr can quote any file
 * git was made to read.
 *
 * @internal
 */
import { spawn } from "node:child_process"
import { closeSync, constants, existsSync, mkdirSync, openSync, readlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { Effect, Option, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import type {
  BlameQuery,
  CommitQuery,
  DiffQuery,
  DiffShape,
  GitBackendShape,
  GitWrites,
  Signature,
  LogQuery,
  Repository,
  RevisionError,
  ShowQuery,
  StatusQuery
} from "./model.ts"
import type { ConcurrentChange } from "../../internal/workspace/errors.ts"
import { GitFailed, GitWriteRefused, PathNotInRepository, UnknownRevision } from "../GitError.ts"
import { type Operation, planHooks } from "./hooks.ts"
import { Budget, ChangesAcc } from "./changes.ts"
import { confirmDiff, confirmUntracked } from "./confirm.ts"
import { diffParser, LOG_FORMAT, type LogRecord, logParser, parseBlame, parseStatus } from "./nativeParse.ts"
import { EMPTY_TREE, parseRevision } from "./revision.ts"
import { makeShadows, type Shadow } from "./shadow.ts"
import { shapeStatus } from "./statusShape.ts"
import { Tokenizer, text } from "./tokens.ts"
import { irregularFile } from "./worktree.ts"
import type * as Results from "./results.ts"

/** What every `git log` here starts with: machine-readable records, and no external diff, textconv or signature program. */
const LOG_ARGS = [
  "log",
  LOG_FORMAT,
  "-z",
  "--raw",
  "--numstat",
  "--no-color",
  "--no-show-signature",
  "--no-ext-diff",
  "--no-textconv",
  "--diff-merges=first-parent",
  "--find-renames",
  "--ignore-submodules=all",
  "--no-abbrev"
] as const

interface Run {
  readonly code: number
  readonly stdout: Uint8Array
  readonly stderr: string
}

/** Configuration that wins over anything the repository's files say. */
const overrides: ReadonlyArray<readonly [string, string]> = [
  ["core.fsmonitor", "false"],
  ["core.hooksPath", "/dev/null"],
  ["core.pager", "cat"],
  ["core.quotePath", "false"],
  ["core.excludesFile", "/dev/null"],
  ["core.attributesFile", "/dev/null"],
  ["core.untrackedCache", "false"],
  ["core.useReplaceRefs", "false"],
  ["core.sshCommand", "false"],
  ["color.ui", "false"],
  ["diff.noprefix", "false"],
  ["diff.mnemonicPrefix", "false"],
  ["diff.relative", "false"],
  ["diff.renames", "true"],
  ["diff.renameLimit", "1000"],
  ["diff.algorithm", "myers"],
  ["diff.indentHeuristic", "true"],
  ["diff.interHunkContext", "0"],
  ["diff.suppressBlankEmpty", "false"],
  ["diff.orderFile", "/dev/null"],
  ["diff.autoRefreshIndex", "false"],
  ["diff.colorMoved", "false"],
  ["status.renames", "true"],
  ["status.renameLimit", "1000"],
  ["status.showStash", "false"],
  ["status.submoduleSummary", "false"],
  ["log.showSignature", "false"],
  ["log.showRoot", "true"],
  ["log.follow", "false"],
  ["log.decorate", "false"],
  ["log.mailmap", "true"],
  ["mailmap.file", "/dev/null"],
  ["mailmap.blob", ""],
  ["blame.ignoreRevsFile", ""],
  ["blame.markUnblamableLines", "false"],
  ["blame.markIgnoredLines", "false"],
  ["i18n.logOutputEncoding", "UTF-8"],
  ["gpg.program", "false"],
  ["gpg.ssh.program", "false"],
  ["gpg.x509.program", "false"],
  ["protocol.allow", "never"]
]

/**
 * The environment of a git run whose working directory is the working tree
 * as opened (see {@link pinned}): the git and object directories are named
 * relative to it, so git reaches them through that directory, not by its name.
 */
const baseEnv = (repo: Repository, shadow: Shadow): Record<string, string> => {
  const fromTree = (p: string) => path.relative(repo.workTree, p) || "."
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: "/nonexistent",
    XDG_CONFIG_HOME: "/nonexistent",
    LC_ALL: "C",
    LANG: "C",
    TZ: "UTC",
    GIT_DIR: fromTree(repo.gitDir),
    GIT_COMMON_DIR: shadow.commonDir,
    GIT_OBJECT_DIRECTORY: fromTree(shadow.objects),
    GIT_WORK_TREE: ".",
    GIT_CEILING_DIRECTORIES: path.dirname(repo.workTree),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_LITERAL_PATHSPECS: "1",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_NO_LAZY_FETCH: "1"
  }
  env.GIT_CONFIG_COUNT = String(overrides.length)
  overrides.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k
    env[`GIT_CONFIG_VALUE_${i}`] = v
  })
  return env
}

/** Configuration a write adds: no signing program, no editor, no automatic housekeeping. */
const writeOverrides: ReadonlyArray<readonly [string, string]> = [
  ["commit.gpgSign", "false"],
  ["tag.gpgSign", "false"],
  ["core.editor", "false"],
  ["sequence.editor", "false"],
  ["gc.auto", "0"],
  ["maintenance.auto", "false"],
  ["user.useConfigOnly", "false"],
  ["advice.detachedHead", "false"],
  ["submodule.recurse", "false"]
]

/** `@<seconds> +hhmm`, git's raw date. */
const rawDate = (s: Signature) => {
  const sign = s.zoneMinutes < 0 ? "-" : "+"
  const m = Math.abs(s.zoneMinutes)
  return `@${s.timestamp} ${sign}${String(Math.floor(m / 60)).padStart(2, "0")}${String(m % 60).padStart(2, "0")}`
}

/**
 * The environment of a write: the read environment, with the hooks folder
 * checked by `planHooks` (or none), the write's own overrides, and who
 * writes. No variable of the caller's reaches git.
 */
const writeEnv = (
  repo: Repository,
  shadow: Shadow,
  hooks: string | undefined,
  who?: { readonly author: Signature; readonly committer: Signature }
): Record<string, string> => {
  const env = baseEnv(repo, shadow)
  const all = [
    ...overrides.map(([k, v]): readonly [string, string] =>
      k === "core.hooksPath" ? [k, hooks ?? "/dev/null"] : [k, v]
    ),
    ...writeOverrides
  ]
  env.GIT_CONFIG_COUNT = String(all.length)
  all.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k
    env[`GIT_CONFIG_VALUE_${i}`] = v
  })
  env.GIT_EDITOR = "false"
  env.GIT_SEQUENCE_EDITOR = "false"
  // Hooks run in a process of their own: they get no optional-lock promise to keep.
  if (hooks !== undefined) delete env.GIT_OPTIONAL_LOCKS
  if (who !== undefined) {
    env.GIT_AUTHOR_NAME = who.author.name
    env.GIT_AUTHOR_EMAIL = who.author.email
    env.GIT_AUTHOR_DATE = rawDate(who.author)
    env.GIT_COMMITTER_NAME = who.committer.name
    env.GIT_COMMITTER_EMAIL = who.committer.email
    env.GIT_COMMITTER_DATE = rawDate(who.committer)
  }
  return env
}

/** The environment of `git config --file -`: outside any repository, no configuration read but stdin. */
const parseEnv: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
  HOME: "/nonexistent",
  XDG_CONFIG_HOME: "/nonexistent",
  LC_ALL: "C",
  LANG: "C",
  GIT_DIR: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0"
}

const concat = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  if (chunks.length === 1) return chunks[0]!
  let n = 0
  for (const c of chunks) n += c.length
  const out = new Uint8Array(n)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.length
  }
  return out
}

/**
 * The fixed phrase a failure is reported with, chosen from git's standard
 * error; git's own words (which can quote any file it read) never leave.
 */
export const reasonOf = (stderr: string, code: number): string => {
  if (/dubious ownership|safe\.directory/.test(stderr))
    return "the repository belongs to another user (git's ownership check)"
  if (/unknown repository extension|repository format|repositoryformatversion/i.test(stderr)) {
    return "the repository uses a format these tools cannot read"
  }
  if (/index file|bad signature|index uses|unknown index entry format/.test(stderr))
    return "the index could not be read"
  if (
    /bad object|missing (blob|tree|commit)|corrupt|loose object|packfile|unable to read|invalid object|did not receive expected object|object file .* is empty/.test(
      stderr
    )
  ) {
    return "the repository is damaged or incomplete (an object could not be read)"
  }
  if (/not a git repository/.test(stderr)) return "git found no repository there"
  if (/bad revision|unknown revision|ambiguous argument/.test(stderr)) return "git could not resolve a revision"
  return `git exited with code ${code}`
}

/** A git command that exited with an error, kept inside the backend so its stderr can be classified. */
class RunFailed {
  readonly run: Run
  constructor(run: Run) {
    this.run = run
  }
}

/** Whether git's complaint is about a revision rather than the repository itself. */
const revisionTrouble = (stderr: string): boolean =>
  !/corrupt|loose object|packfile|unable to read|[Cc]ould not read|[Ff]ailed to traverse|index file|repository format|unknown repository extension|dubious ownership|not a git repository/.test(
    stderr
  )

/** Whether the `git` binary runs. */
export const gitAvailable: Effect.Effect<boolean, never, ChildProcessSpawner.ChildProcessSpawner> = Effect.gen(
  function* () {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const code = yield* spawner
      .exitCode(ChildProcess.make("git", ["--version"], { stdin: "ignore", env: { PATH: process.env.PATH ?? "" } }))
      .pipe(Effect.option)
    return Option.isSome(code) && code.value === 0
  }
)

const procFd = existsSync("/proc/self/fd")

const replaced = (operation: string) =>
  new GitFailed({
    operation,
    detail:
      "the repository's directory was replaced while it was read (moved, or swapped for a link); try again once nothing else is moving it"
  })

/**
 * The working tree as opened, for git's working directory (threat 44): the
 * directory is opened (`O_DIRECTORY | O_NOFOLLOW`), its descriptor checked to
 * be the checked path, and git is started in `/proc/self/fd/<fd>` (the child
 * changes into it before it runs git, while it still holds the descriptor),
 * so a working tree swapped for a link to another repository after the
 * checks is not the one git reads. Elsewhere, the checked path.
 */
const pinned = <A, E>(
  repo: Repository,
  operation: string,
  use: (cwd: string) => Effect.Effect<A, E>
): Effect.Effect<A, E | GitFailed> => {
  if (!procFd) return use(repo.workTree)
  return Effect.acquireUseRelease(
    Effect.suspend(() => {
      let fd: number
      try {
        fd = openSync(repo.workTree, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
      } catch {
        return Effect.fail(replaced(operation))
      }
      let here: string | undefined
      try {
        here = readlinkSync(`/proc/self/fd/${fd}`)
      } catch {
        here = undefined
      }
      if (here !== repo.workTree) {
        closeSync(fd)
        return Effect.fail(replaced(operation))
      }
      return Effect.succeed(fd)
    }),
    (fd) => use(`/proc/self/fd/${fd}`),
    (fd) => Effect.sync(() => closeSync(fd))
  )
}

/** Runs git to its end: its exit code, its whole stdout (or nothing, when a parser is fed), the head of stderr. */
export type Exec = (
  args: ReadonlyArray<string>,
  options: {
    readonly env: Record<string, string>
    readonly cwd: string
    readonly stdin?: Uint8Array | undefined
    readonly onChunk?: ((chunk: Uint8Array) => void) | undefined
  }
) => Effect.Effect<Run, GitFailed>

const couldNotRun = (args: ReadonlyArray<string>) =>
  new GitFailed({ operation: args[0] ?? "", detail: "could not run git; is git installed and on PATH?" })

/** What git prints, kept as {@link Run} wants it: stdout whole or fed to a parser, the first 64 KiB of stderr. */
const collector = (onChunk: ((chunk: Uint8Array) => void) | undefined) => {
  const chunks: Array<Uint8Array> = []
  const errs: Array<Uint8Array> = []
  let errBytes = 0
  return {
    out: (c: Uint8Array) => (onChunk === undefined ? chunks.push(c) : onChunk(c)),
    err: (c: Uint8Array) => {
      if (errBytes < 65_536) {
        errs.push(c)
        errBytes += c.length
      }
    },
    run: (code: number): Run => ({ code, stdout: concat(chunks), stderr: text(concat(errs)) })
  }
}

/** {@link Exec} through an `effect/process` spawner (`GitBackend.layerNativeWith`). */
const spawnerExec =
  (spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]): Exec =>
  (args, options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const handle = yield* spawner.spawn(
          ChildProcess.make("git", args, {
            cwd: options.cwd,
            env: options.env,
            extendEnv: false,
            stdin: options.stdin === undefined ? "ignore" : Stream.make(options.stdin),
            // git here starts no children (no hooks, filters, pagers or submodules), so it needs no process
            // group of its own; without one Node can spawn it on its fast path and nothing is signalled after.
            detached: false
          })
        )
        const output = collector(options.onChunk)
        yield* Effect.all(
          [
            Stream.runForEach(handle.stdout, (c) => Effect.sync(() => output.out(c))),
            Stream.runForEach(handle.stderr, (c) => Effect.sync(() => output.err(c)))
          ],
          { concurrency: 2, discard: true }
        )
        return output.run(Number(yield* handle.exitCode))
      })
    ).pipe(Effect.mapError(() => couldNotRun(args)))

/**
 * {@link Exec} with Node's own spawn, the default: git's output is read whole
 * or fed to a parser, never streamed on, and the spawner's streams cost 1.5
 * to 2 ms per call, a tenth of a `git status`. An interrupted call kills git.
 */
export const nodeExec: Exec = (args, options) =>
  Effect.callback<Run, GitFailed>((resume) => {
    let child: ReturnType<typeof spawn>
    try {
      // git here starts no children (no hooks, filters, pagers or submodules): no process group is needed.
      child = spawn("git", args, {
        cwd: options.cwd,
        env: options.env,
        stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"]
      })
    } catch {
      resume(Effect.fail(couldNotRun(args)))
      return
    }
    const output = collector(options.onChunk)
    let done = false
    const settle = (effect: Effect.Effect<Run, GitFailed>) => {
      if (done) return
      done = true
      resume(effect)
    }
    child.stdout?.on("data", output.out)
    child.stderr?.on("data", output.err)
    child.on("error", () => settle(Effect.fail(couldNotRun(args))))
    // A git killed by a signal has no exit code: it did not run to its end.
    child.on("close", (code) =>
      settle(code === null ? Effect.fail(couldNotRun(args)) : Effect.succeed(output.run(code)))
    )
    if (options.stdin !== undefined && child.stdin !== null) {
      child.stdin.on("error", () => {
        // git stopped reading; its exit says what happened.
      })
      child.stdin.end(options.stdin)
    }
    return Effect.sync(() => {
      done = true
      child.kill("SIGKILL")
    })
  })

/** The native backend over a spawner given in the context. */
export const makeNativeWithSpawner: Effect.Effect<GitBackendShape, never, ChildProcessSpawner.ChildProcessSpawner> =
  Effect.flatMap(ChildProcessSpawner.ChildProcessSpawner, (spawner) => makeNative(spawnerExec(spawner)))

export const makeNative = (exec: Exec): Effect.Effect<GitBackendShape> =>
  Effect.gen(function* () {
    let version: Promise<readonly [number, number]> | undefined

    /** git's own parse of the repository's config bytes, outside any repository, includes not followed. */
    const shadowOf = makeShadows((config) =>
      Effect.flatMap(
        exec(["config", "--file", "-", "--no-includes", "--list", "-z"], {
          env: parseEnv,
          cwd: tmpdir(),
          stdin: config
        }),
        (run) =>
          run.code === 0
            ? Effect.succeed(run.stdout)
            : Effect.fail(
                new GitFailed({ operation: "config", detail: "the repository's configuration could not be parsed" })
              )
      )
    )

    const git = (
      repo: Repository,
      args: ReadonlyArray<string>,
      onChunk?: (chunk: Uint8Array) => void,
      stdin?: Uint8Array
    ): Effect.Effect<Run, GitFailed> =>
      Effect.flatMap(shadowOf(repo), (shadow) =>
        pinned(repo, args[0] ?? "", (cwd) => exec(args, { env: baseEnv(repo, shadow), cwd, stdin, onChunk }))
      )

    const failed = (op: string, run: Run) => new GitFailed({ operation: op, detail: reasonOf(run.stderr, run.code) })

    const gitVersion = () =>
      Effect.promise(() => {
        version ??= Effect.runPromise(
          exec(["version"], { env: parseEnv, cwd: tmpdir() }).pipe(
            Effect.map((r) => {
              const m = /(\d+)\.(\d+)/.exec(text(r.stdout))
              return m === null ? ([0, 0] as const) : ([Number(m[1]), Number(m[2])] as const)
            }),
            Effect.orElseSucceed(() => [0, 0] as const)
          )
        )
        return version
      })

    /** Why a checked revision did not resolve: ambiguous, no commits yet, or unknown. */
    const classify = (repo: Repository, rev: string, stderr: string): Effect.Effect<UnknownRevision, GitFailed> =>
      Effect.gen(function* () {
        if (/ambiguous/.test(stderr)) return new UnknownRevision({ revision: rev, reason: "ambiguous" })
        const parsed = yield* Effect.orDie(parseRevision(rev))
        if (parsed.base === "HEAD" || parsed.base === "@") {
          const head = yield* git(repo, ["rev-parse", "--verify", "-q", "HEAD"])
          if (head.code !== 0) return new UnknownRevision({ revision: rev, reason: "no-commits" })
        }
        return new UnknownRevision({ revision: rev, reason: "unknown" })
      })

    /** One `rev-parse` of checked revisions: their commit hashes, or `undefined` if any does not resolve. */
    const revParse = (repo: Repository, revs: ReadonlyArray<string>) =>
      Effect.map(git(repo, ["rev-parse", "--end-of-options", ...revs.map((r) => `${r}^{commit}`), "--"]), (run) => {
        const hashes = text(run.stdout)
          .split("\n")
          .filter((l) => /^[0-9a-f]{40,64}$/.test(l))
        return { run, hashes: run.code === 0 && hashes.length === revs.length ? hashes : undefined }
      })

    /** Resolves checked revisions to commit hashes with one `rev-parse`; a failure is classified per revision. */
    const resolveAll = (repo: Repository, revs: ReadonlyArray<string>): Effect.Effect<Array<string>, RevisionError> =>
      Effect.gen(function* () {
        for (const rev of revs) yield* parseRevision(rev)
        if (revs.length === 0) return []
        const { run, hashes } = yield* revParse(repo, revs)
        if (hashes !== undefined) return hashes
        for (const rev of revs) {
          const one = yield* git(repo, ["rev-parse", "--verify", "--end-of-options", `${rev}^{commit}`])
          if (one.code !== 0) return yield* yield* classify(repo, rev, one.stderr)
        }
        return yield* failed("rev-parse", run)
      })

    const resolve = (repo: Repository, rev: string): Effect.Effect<string, RevisionError> =>
      Effect.map(resolveAll(repo, [rev]), (h) => h[0]!)

    // With no room for hunks (maxDiffSize 0), git is not asked for patches at all (-U and --inter-hunk-context
    // would imply them); the counts still come from the same algorithm and whitespace rule. See markUnasked.
    const diffFlags = (shape: DiffShape): Array<string> => [
      "--raw",
      "--numstat",
      ...(shape.maxDiffSize === 0 ? [] : ["-p", `-U${shape.contextLines}`, "--inter-hunk-context=0"]),
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      "--find-renames",
      "--diff-algorithm=myers",
      "--indent-heuristic",
      "--src-prefix=a/",
      "--dst-prefix=b/",
      "--no-relative",
      "--ignore-submodules=all",
      "--no-abbrev",
      ...(shape.ignoreWhitespace ? ["-w"] : [])
    ]

    /** Without patches, a file whose lines changed had hunks, all left out: it is truncated, as the budget would say. */
    const markUnasked = (changes: ChangesAcc): void => {
      if (changes.shape.maxDiffSize !== 0) return
      for (const file of changes.files) {
        if (file.wantsHunks && file.additions + file.deletions > 0) file.truncated = true
      }
    }

    const toCommit = (record: LogRecord, withDiff: boolean): Results.Commit => {
      const changes = record.changes.toJSON()
      return {
        ...record.commit,
        filesChanged: changes.stats.filesChanged,
        stats: { additions: changes.stats.additions, deletions: changes.stats.deletions },
        ...(withDiff ? { diff: changes } : {})
      }
    }

    const logRecords = (
      repo: Repository,
      args: ReadonlyArray<string>,
      shape: DiffShape,
      budget: Budget
    ): Effect.Effect<Array<LogRecord>, GitFailed | RunFailed> =>
      Effect.gen(function* () {
        const tokenizer = new Tokenizer(logParser(() => new ChangesAcc(shape), budget))
        const run = yield* git(repo, args, (c) => tokenizer.feed(c))
        if (run.code !== 0) return yield* Effect.fail(new RunFailed(run))
        const records = tokenizer.end()
        for (const record of records) markUnasked(record.changes)
        return records
      })

    /** A failed `git log` of a checked revision: a revision that names nothing, unless git said the repository is broken. */
    const logFailure = (repo: Repository, rev: string, run: Run): Effect.Effect<never, RevisionError> =>
      revisionTrouble(run.stderr)
        ? Effect.flatMap(classify(repo, rev, run.stderr), Effect.fail)
        : Effect.fail(failed("log", run))

    const status = (repo: Repository, query: StatusQuery): Effect.Effect<Results.StatusOutput, GitFailed> =>
      Effect.gen(function* () {
        const run = yield* git(repo, [
          "status",
          "--porcelain=v2",
          "-z",
          "--branch",
          "--untracked-files=all",
          "--ignored=no",
          "--find-renames",
          "--ignore-submodules=all",
          "--no-ahead-behind"
        ])
        if (run.code !== 0) return yield* failed("status", run)
        const lists = parseStatus(run.stdout)
        // Names git listed from the working tree count only if they are there below it (threat 44).
        return shapeStatus({ ...lists, untracked: confirmUntracked(repo.workTree, lists.untracked) }, query.limit)
      })

    const log = (repo: Repository, query: LogQuery): Effect.Effect<Results.LogOutput, RevisionError> =>
      Effect.gen(function* () {
        // The checked revision goes to git as is (after --end-of-options, before --): one process, no rev-parse.
        const start = query.rev === undefined ? "HEAD" : (yield* parseRevision(query.rev)).text
        const [major, minor] = yield* gitVersion()
        const sinceFlag = major > 2 || (major === 2 && minor >= 37) ? "--since-as-filter" : "--since"
        const args = [
          ...LOG_ARGS,
          "--full-diff",
          `--max-count=${query.limit + 1}`,
          ...(query.since === undefined ? [] : [`${sinceFlag}=@${query.since}`]),
          ...(query.until === undefined ? [] : [`--until=@${query.until}`]),
          ...(query.author === undefined && query.grep === undefined
            ? []
            : ["--fixed-strings", "--regexp-ignore-case"]),
          ...(query.author === undefined ? [] : [`--author=${query.author}`]),
          ...(query.grep === undefined ? [] : [`--grep=${query.grep}`]),
          ...(query.includeDiff ? diffFlags(query.diff) : []),
          "--end-of-options",
          start,
          "--",
          ...(query.path === undefined ? [] : [query.path])
        ]
        const records = yield* logRecords(repo, args, query.diff, new Budget(query.diff.maxDiffSize)).pipe(
          Effect.catch((e) =>
            e instanceof RunFailed
              ? query.rev === undefined && /does not have any commits yet|bad revision 'HEAD'/.test(e.run.stderr)
                ? Effect.succeed([] as Array<LogRecord>)
                : logFailure(repo, start, e.run)
              : Effect.fail(e)
          )
        )
        const truncated = records.length > query.limit
        return {
          commits: records.slice(0, query.limit).map((r) => toCommit(r, query.includeDiff)),
          truncated
        }
      })

    const runDiff = (
      repo: Repository,
      shape: DiffShape,
      revs: ReadonlyArray<string>,
      extraFlags: ReadonlyArray<string>,
      paths: ReadonlyArray<string>
    ): Effect.Effect<Results.Changes, GitFailed> =>
      Effect.gen(function* () {
        const acc = new ChangesAcc(shape)
        const tokenizer = new Tokenizer(diffParser(acc, new Budget(shape.maxDiffSize)))
        const run = yield* git(repo, ["diff", ...diffFlags(shape), "-z", ...extraFlags, ...revs, "--", ...paths], (c) =>
          tokenizer.feed(c)
        )
        if (run.code !== 0) return yield* failed("diff", run)
        tokenizer.end()
        markUnasked(acc)
        return acc.toJSON()
      })

    /** A diff against the working tree shows only lines found in the working tree below the root (threat 44). */
    const confirmed = (
      repo: Repository,
      query: DiffQuery,
      changes: Results.Changes
    ): Effect.Effect<Results.Changes, ConcurrentChange> => {
      if (query.staged || query.compare !== undefined) return Effect.succeed(changes)
      const problem = confirmDiff(repo.workTree, changes, query.ignoreWhitespace)
      return problem === undefined ? Effect.succeed(changes) : Effect.fail(problem)
    }

    const diff = (
      repo: Repository,
      query: DiffQuery
    ): Effect.Effect<Results.DiffOutput, RevisionError | ConcurrentChange> =>
      Effect.gen(function* () {
        const wanted = [query.base ?? "HEAD", ...(query.compare === undefined ? [] : [query.compare])]
        for (const rev of wanted) yield* parseRevision(rev)
        const flags = query.staged ? ["--cached"] : []
        // The checked names go to git diff itself (after --end-of-options): one process.
        const changes = yield* Effect.result(runDiff(repo, query, ["--end-of-options", ...wanted], flags, query.paths))
        if (changes._tag === "Success") {
          return {
            base: query.base ?? "HEAD",
            compare: query.compare ?? (query.staged ? "index" : "working tree"),
            ...(yield* confirmed(repo, query, changes.success))
          }
        }
        // Slow path: an unborn HEAD compares with the empty tree; anything else is classified.
        const resolved = yield* resolveAll(repo, wanted).pipe(
          Effect.catchIf(
            (e) => query.base === undefined && e._tag === "UnknownRevision" && e.reason === "no-commits",
            () => Effect.map(resolveAll(repo, wanted.slice(1)), (rest) => [undefined, ...rest])
          )
        )
        const base = resolved[0]
        const compare = query.compare === undefined ? undefined : resolved[1]
        const revs = [base ?? EMPTY_TREE, ...(compare === undefined ? [] : [compare])]
        const result = yield* runDiff(repo, query, revs, flags, query.paths)
        return {
          base: base === undefined ? null : (query.base ?? "HEAD"),
          compare: query.compare ?? (query.staged ? "index" : "working tree"),
          ...(yield* confirmed(repo, query, result))
        }
      })

    const blame = (
      repo: Repository,
      query: BlameQuery
    ): Effect.Effect<Results.BlameOutput, RevisionError | PathNotInRepository> =>
      Effect.gen(function* () {
        const name = query.rev === undefined ? undefined : (yield* parseRevision(query.rev)).text
        const last =
          query.endLine === undefined
            ? query.startLine + query.maxLines
            : Math.min(query.endLine, query.startLine + query.maxLines)
        // git blame has no --end-of-options; the checked name cannot start with "-", so it is passed as is.
        // The working tree's file comes on stdin (read through the workspace): git never opens the path.
        const contents = name === undefined ? (query.contents ?? new Uint8Array(0)) : undefined
        const run = yield* git(
          repo,
          [
            "blame",
            "--porcelain",
            "--no-textconv",
            "-L",
            `${query.startLine},${last}`,
            ...(contents === undefined ? [] : ["--contents", "-"]),
            ...(name === undefined ? [] : [name]),
            "--",
            query.path
          ],
          undefined,
          contents
        )
        if (run.code !== 0 && name !== undefined && /bad revision|unknown revision|ambiguous/.test(run.stderr)) {
          return yield* Effect.flatMap(resolve(repo, name), () => failed("blame", run))
        }
        const rev = name
        if (run.code !== 0) {
          if (rev === undefined && /no such ref: HEAD|does not have any commits/.test(run.stderr)) {
            return yield* new UnknownRevision({ revision: "HEAD", reason: "no-commits" })
          }
          if (/has only \d+ lines?/.test(run.stderr)) {
            return { path: query.path, rev: rev ?? "working tree", lines: [], truncated: false }
          }
          if (/no such path|does not exist|cannot stat path/.test(run.stderr)) {
            return yield* new PathNotInRepository({
              path: query.path,
              reason: rev === undefined ? "not-tracked" : "not-in-revision",
              ...(query.rev === undefined ? {} : { revision: query.rev })
            })
          }
          return yield* failed("blame", run)
        }
        const lines = parseBlame(run.stdout)
        const truncated = lines.length > query.maxLines
        const kept = truncated ? lines.slice(0, query.maxLines) : lines
        return {
          path: query.path,
          rev: rev ?? "working tree",
          lines: kept,
          truncated,
          ...(truncated ? { nextLine: query.startLine + query.maxLines } : {})
        }
      })

    const show = (repo: Repository, query: ShowQuery): Effect.Effect<Results.ShowOutput, RevisionError> =>
      Effect.gen(function* () {
        const rev = (yield* parseRevision(query.rev)).text
        const inline = query.includeDiff && query.paths.length === 0
        const args = [
          ...LOG_ARGS,
          "--max-count=1",
          "--no-walk",
          ...(inline ? diffFlags(query) : []),
          "--end-of-options",
          rev,
          "--"
        ]
        const records = yield* logRecords(repo, args, query, new Budget(query.maxDiffSize)).pipe(
          Effect.catch((e) => (e instanceof RunFailed ? logFailure(repo, rev, e.run) : Effect.fail(e)))
        )
        const record = records[0]
        if (record === undefined) return yield* new UnknownRevision({ revision: query.rev, reason: "unknown" })
        const commit = toCommit(record, false)
        if (!query.includeDiff) return { commit }
        if (inline) return { commit, diff: record.changes.toJSON() }
        const parent = commit.parents[0] ?? EMPTY_TREE
        const diff = yield* runDiff(repo, query, [parent, commit.hash], [], query.paths)
        return { commit, diff }
      })

    /** Runs a write: the hooks planned (or the refusal), then git in the write environment. */
    const write = (
      repo: Repository,
      operation: Operation,
      args: ReadonlyArray<string>,
      options: { readonly stdin?: Uint8Array; readonly who?: CommitQuery } = {}
    ): Effect.Effect<Run & { readonly hooks: ReadonlyArray<string> }, GitFailed | GitWriteRefused> =>
      Effect.gen(function* () {
        const shadow = yield* shadowOf(repo)
        const hooks = planHooks(repo, shadow.write.hooksPath, operation)
        if (hooks instanceof GitWriteRefused) return yield* hooks
        // The reflog goes to the repository's own `logs` (linked from the shadow), made here if it is missing.
        yield* Effect.sync(() => {
          try {
            mkdirSync(path.join(repo.commonDir, "logs"))
          } catch {
            // There already, or git reports why it cannot write.
          }
        })
        const env = writeEnv(repo, shadow, hooks.dir, options.who)
        const run = yield* pinned(repo, operation, (cwd) => exec(args, { env, cwd, stdin: options.stdin }))
        return { ...run, hooks: hooks.present }
      })

    const lines = (run: Run) =>
      text(run.stdout)
        .split("\n")
        .filter((l) => l !== "")

    const writes: GitWrites = {
      config: (repo) => Effect.map(shadowOf(repo), (shadow) => shadow.write),
      add: (repo, paths) =>
        Effect.gen(function* () {
          const run = yield* write(repo, "add", ["add", "--", ...paths])
          if (run.code === 0) return
          if (/ignored by one of your \.gitignore/.test(run.stderr)) {
            return yield* new GitWriteRefused({ operation: "add", reason: "ignored", names: paths })
          }
          if (/did not match any files/.test(run.stderr)) {
            const m = /pathspec '(.*)' did not match/.exec(run.stderr)
            return yield* new PathNotInRepository({ path: m?.[1] ?? paths[0] ?? "", reason: "not-tracked" })
          }
          return yield* failed("add", run)
        }),
      commit: (repo, query) =>
        Effect.gen(function* () {
          const run = yield* write(
            repo,
            "commit",
            ["commit", "--quiet", "--cleanup=verbatim", "--no-status", "-F", "-", ...(query.amend ? ["--amend"] : [])],
            { stdin: new TextEncoder().encode(query.message), who: query }
          )
          if (run.code !== 0) {
            // A pre-commit or commit-msg hook that exits with an error stops the commit, often saying nothing.
            const checking = run.hooks.filter((h) => ["pre-commit", "prepare-commit-msg", "commit-msg"].includes(h))
            if (checking.length > 0) {
              return yield* new GitWriteRefused({ operation: "commit", reason: "hook-refused", names: checking })
            }
            return yield* failed("commit", run)
          }
          const head = yield* git(repo, ["rev-parse", "--verify", "HEAD"])
          const hash = lines(head)[0]
          if (head.code !== 0 || hash === undefined) return yield* failed("rev-parse", head)
          return hash
        }),
      branches: (repo) =>
        Effect.gen(function* () {
          const run = yield* git(repo, ["for-each-ref", "--format=%(refname)", "refs/heads/"])
          if (run.code !== 0) return yield* failed("for-each-ref", run)
          return lines(run)
            .map((r) => r.slice("refs/heads/".length))
            .sort()
        }),
      remoteContaining: (repo, oid) =>
        Effect.gen(function* () {
          const run = yield* git(repo, ["for-each-ref", "--format=%(refname)", "--contains", oid, "refs/remotes/"])
          if (run.code !== 0) return yield* failed("for-each-ref", run)
          return lines(run)
            .filter((r) => !r.endsWith("/HEAD"))
            .sort()
        }),
      branch: (repo, name, oid) =>
        Effect.gen(function* () {
          const run = yield* write(repo, "branch", ["branch", "--no-track", "--end-of-options", name, oid])
          if (run.code === 0) return
          if (/already exists/.test(run.stderr)) {
            return yield* new GitWriteRefused({ operation: "branch", reason: "branch-exists", names: [name] })
          }
          return yield* failed("branch", run)
        }),
      switchTo: (repo, name) =>
        Effect.gen(function* () {
          const run = yield* write(repo, "switch", [
            "switch",
            "--quiet",
            "--no-guess",
            "--no-recurse-submodules",
            "--end-of-options",
            name
          ])
          if (run.code === 0) return
          if (/would be overwritten/.test(run.stderr)) {
            return yield* new GitWriteRefused({ operation: "switch", reason: "changes-in-the-way" })
          }
          if (/invalid reference|did not match/.test(run.stderr)) {
            return yield* new GitWriteRefused({ operation: "switch", reason: "no-such-branch", names: [name] })
          }
          return yield* failed("switch", run)
        }),
      stashPush: (repo, message) =>
        Effect.gen(function* () {
          const run = yield* write(repo, "stash", [
            "stash",
            "push",
            "--quiet",
            ...(message === undefined ? [] : ["--message", message])
          ])
          if (run.code !== 0) return yield* failed("stash", run)
        }),
      stashPop: (repo) =>
        Effect.gen(function* () {
          const run = yield* write(repo, "stash", ["stash", "pop", "--quiet"])
          if (run.code === 0) return
          if (/conflict/i.test(run.stderr) || /conflict/i.test(text(run.stdout))) {
            return yield* new GitWriteRefused({ operation: "stash", reason: "conflicted" })
          }
          if (/would be overwritten/.test(run.stderr)) {
            return yield* new GitWriteRefused({ operation: "stash", reason: "changes-in-the-way" })
          }
          return yield* failed("stash", run)
        }),
      stashList: (repo) =>
        Effect.gen(function* () {
          const run = yield* git(repo, ["stash", "list", "--format=%gs"])
          if (run.code !== 0) return yield* failed("stash", run)
          return lines(run).map((message, index) => ({ index, message }))
        })
    }

    // The isomorphic backend, made on first need, for a working tree git would block in (see `worktree.ts`).
    let isomorphic: Promise<GitBackendShape> | undefined
    const fallback = Effect.promise(() => {
      isomorphic ??= import("./iso.ts").then((iso) => iso.makeIsomorphic())
      return isomorphic
    })
    /** Runs `op`, unless the working tree holds a FIFO git would open by name: then the isomorphic backend's. */
    const unblocked =
      <Q, A, E>(
        op: (repo: Repository, query: Q) => Effect.Effect<A, E>,
        other: (backend: GitBackendShape) => (repo: Repository, query: Q) => Effect.Effect<A, E>
      ) =>
      (repo: Repository, query: Q): Effect.Effect<A, E> =>
        Effect.suspend(() =>
          irregularFile(repo.workTree) === undefined
            ? op(repo, query)
            : Effect.flatMap(fallback, (backend) => other(backend)(repo, query))
        )

    return {
      kind: "native",
      status: unblocked(status, (b) => b.status),
      log: unblocked(log, (b) => b.log),
      diff: unblocked(diff, (b) => b.diff),
      blame: unblocked(blame, (b) => b.blame),
      show: unblocked(show, (b) => b.show),
      writes
    } satisfies GitBackendShape
  })
