/**
 * The native backend: the `git` binary, spawned through `effect/process`
 * with an argument vector (never a shell), in a scrubbed environment.
 *
 * **What keeps the repository's own configuration from running commands**
 * (CVE-2025-58764 and its kind). The child sees only PATH and git variables:
 * no system or global config, no HOME, `GIT_DIR`/`GIT_WORK_TREE` set
 * explicitly (no discovery upwards), literal pathspecs, no optional locks
 * (reads never write the index), no replace refs. Configuration passed through
 * `GIT_CONFIG_COUNT` (which wins over the repository's files) disables the
 * fsmonitor hook, hooks, the pager, signature checking, and every clean,
 * smudge and process filter the repository defines (the driver names are read
 * from its configuration first, including included files); diffs run with
 * `--no-ext-diff --no-textconv`, submodules are ignored so no git runs inside
 * them. Revisions are checked against one grammar (no leading `-`), resolved
 * with `rev-parse --verify --end-of-options <rev>^{commit}`, and only the
 * resolved hashes reach the command; paths always follow `--`.
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect, Option, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import type * as Blame from "../Blame.ts"
import type * as Diff from "../Diff.ts"
import type {
  BlameQuery,
  DiffQuery,
  DiffShape,
  GitBackendShape,
  LogQuery,
  Repository,
  RevisionError,
  ShowQuery,
  StatusQuery
} from "../GitBackend.ts"
import { GitFailed, PathNotInRepository, UnknownRevision } from "../GitError.ts"
import type * as Log from "../Log.ts"
import type * as Show from "../Show.ts"
import type * as Status from "../Status.ts"
import { Budget, ChangesAcc } from "./changes.ts"
import { diffParser, LOG_FORMAT, type LogRecord, logParser, parseBlame, parseStatus } from "./nativeParse.ts"
import { EMPTY_TREE, parseRevision } from "./revision.ts"
import { shapeStatus } from "./statusShape.ts"
import { Tokenizer, text } from "./tokens.ts"

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

const baseEnv = (repo: Repository, extra: ReadonlyArray<readonly [string, string]>): Record<string, string> => {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: "/nonexistent",
    XDG_CONFIG_HOME: "/nonexistent",
    LC_ALL: "C",
    LANG: "C",
    TZ: "UTC",
    GIT_DIR: repo.gitDir,
    GIT_WORK_TREE: repo.workTree,
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
  const all = [...overrides, ...extra]
  env.GIT_CONFIG_COUNT = String(all.length)
  all.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k
    env[`GIT_CONFIG_VALUE_${i}`] = v
  })
  return env
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

const firstLine = (s: string) =>
  s
    .split("\n")
    .map((l) => l.replace(/^(fatal|error): /, "").trim())
    .find((l) => l !== "" && !l.startsWith("hint:")) ?? "no output"

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

interface ConfigState {
  readonly signature: string
  readonly files: ReadonlyArray<string>
  readonly filters: ReadonlyArray<readonly [string, string]>
}

export const makeNative: Effect.Effect<GitBackendShape, never, ChildProcessSpawner.ChildProcessSpawner> = Effect.gen(
  function* () {
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const configs = new Map<string, ConfigState>()
    let version: Promise<readonly [number, number]> | undefined

    const spawn = (
      repo: Repository,
      args: ReadonlyArray<string>,
      extra: ReadonlyArray<readonly [string, string]>,
      onChunk?: (chunk: Uint8Array) => void
    ): Effect.Effect<Run, GitFailed> =>
      Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* spawner.spawn(
            ChildProcess.make("git", args, {
              cwd: repo.workTree,
              env: baseEnv(repo, extra),
              extendEnv: false,
              stdin: "ignore",
              // git here starts no children (no hooks, filters, pagers or submodules), so it needs no process
              // group of its own; without one Node can spawn it on its fast path and nothing is signalled after.
              detached: false
            })
          )
          const chunks: Array<Uint8Array> = []
          const errs: Array<Uint8Array> = []
          let errBytes = 0
          yield* Effect.all(
            [
              Stream.runForEach(handle.stdout, (c) =>
                Effect.sync(() => (onChunk === undefined ? chunks.push(c) : onChunk(c)))
              ),
              Stream.runForEach(handle.stderr, (c) =>
                Effect.sync(() => {
                  if (errBytes < 65_536) {
                    errs.push(c)
                    errBytes += c.length
                  }
                })
              )
            ],
            { concurrency: 2, discard: true }
          )
          const code = yield* handle.exitCode
          return { code: Number(code), stdout: concat(chunks), stderr: text(concat(errs)) }
        })
      ).pipe(
        Effect.mapError(
          (e) =>
            new GitFailed({
              operation: args[0] ?? "",
              detail: `could not run git (${e.message}); is git installed and on PATH?`
            })
        )
      )

    /** Filter drivers the repository's configuration defines, neutralized; cached by the config files' stats. */
    const filterOverrides = (repo: Repository): Effect.Effect<ReadonlyArray<readonly [string, string]>, GitFailed> =>
      Effect.gen(function* () {
        const base = [path.join(repo.commonDir, "config"), path.join(repo.gitDir, "config.worktree")]
        const cached = configs.get(repo.gitDir)
        const signatureOf = (files: ReadonlyArray<string>) =>
          Effect.promise(() =>
            Promise.all(
              files.map((f) =>
                fsp.stat(f).then(
                  (s) => `${f}:${s.mtimeMs}:${s.size}:${s.ino}`,
                  () => `${f}:-`
                )
              )
            ).then((parts) => parts.join("|"))
          )
        if (cached !== undefined && (yield* signatureOf(cached.files)) === cached.signature) return cached.filters
        const run = yield* spawn(repo, ["config", "--list", "-z", "--show-origin"], [])
        const tokens = text(run.stdout).split("\0")
        const files = new Set(base)
        const drivers = new Set<string>()
        for (let i = 0; i + 1 < tokens.length; i += 2) {
          const origin = tokens[i]!
          const entry = tokens[i + 1]!
          if (origin.startsWith("file:")) files.add(path.resolve(repo.workTree, origin.slice(5)))
          const key = entry.split("\n", 1)[0]!
          const m = /^filter\.(.+)\.(clean|smudge|process|required)$/.exec(key)
          if (m !== null) drivers.add(m[1]!)
        }
        const filters: Array<readonly [string, string]> = []
        for (const d of drivers) {
          for (const k of ["clean", "smudge", "process"]) filters.push([`filter.${d}.${k}`, ""])
          filters.push([`filter.${d}.required`, "false"])
        }
        const fileList = [...files]
        configs.set(repo.gitDir, { signature: yield* signatureOf(fileList), files: fileList, filters })
        return filters
      })

    const git = (repo: Repository, args: ReadonlyArray<string>, onChunk?: (chunk: Uint8Array) => void) =>
      Effect.flatMap(filterOverrides(repo), (extra) => spawn(repo, args, extra, onChunk))

    const failed = (op: string, run: Run) => new GitFailed({ operation: op, detail: firstLine(run.stderr) })

    const gitVersion = (repo: Repository) =>
      Effect.promise(() => {
        version ??= Effect.runPromise(
          spawn(repo, ["version"], []).pipe(
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

    const diffFlags = (shape: DiffShape): Array<string> => [
      "--raw",
      "--numstat",
      "-p",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      "--find-renames",
      "--diff-algorithm=myers",
      "--indent-heuristic",
      `-U${shape.contextLines}`,
      "--inter-hunk-context=0",
      "--src-prefix=a/",
      "--dst-prefix=b/",
      "--no-relative",
      "--ignore-submodules=all",
      "--no-abbrev",
      ...(shape.ignoreWhitespace ? ["-w"] : [])
    ]

    const toCommit = (record: LogRecord, withDiff: boolean): Log.Commit => {
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
    ): Effect.Effect<Array<LogRecord>, GitFailed> =>
      Effect.gen(function* () {
        const tokenizer = new Tokenizer(logParser(() => new ChangesAcc(shape), budget))
        const run = yield* git(repo, args, (c) => tokenizer.feed(c))
        if (run.code !== 0) return yield* failed("log", run)
        return tokenizer.end()
      })

    const status = (repo: Repository, query: StatusQuery): Effect.Effect<Status.Output, GitFailed> =>
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
        return shapeStatus(parseStatus(run.stdout), query.limit)
      })

    const log = (repo: Repository, query: LogQuery): Effect.Effect<Log.Output, RevisionError> =>
      Effect.gen(function* () {
        // The checked revision goes to git as is (after --end-of-options, before --): one process, no rev-parse.
        const start = query.rev === undefined ? "HEAD" : (yield* parseRevision(query.rev)).text
        const [major, minor] = yield* gitVersion(repo)
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
            query.rev === undefined && /does not have any commits yet|bad revision 'HEAD'/.test(e.detail)
              ? Effect.succeed([] as Array<LogRecord>)
              : Effect.flatMap(classify(repo, start, e.detail), Effect.fail)
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
    ): Effect.Effect<Diff.Changes, GitFailed> =>
      Effect.gen(function* () {
        const acc = new ChangesAcc(shape)
        const tokenizer = new Tokenizer(diffParser(acc, new Budget(shape.maxDiffSize)))
        const run = yield* git(repo, ["diff", ...diffFlags(shape), "-z", ...extraFlags, ...revs, "--", ...paths], (c) =>
          tokenizer.feed(c)
        )
        if (run.code !== 0) return yield* failed("diff", run)
        tokenizer.end()
        return acc.toJSON()
      })

    const diff = (repo: Repository, query: DiffQuery): Effect.Effect<Diff.Output, RevisionError> =>
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
            ...changes.success
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
          ...result
        }
      })

    const blame = (
      repo: Repository,
      query: BlameQuery
    ): Effect.Effect<Blame.Output, RevisionError | PathNotInRepository> =>
      Effect.gen(function* () {
        const name = query.rev === undefined ? undefined : (yield* parseRevision(query.rev)).text
        const last =
          query.endLine === undefined
            ? query.startLine + query.maxLines
            : Math.min(query.endLine, query.startLine + query.maxLines)
        // git blame has no --end-of-options; the checked name cannot start with "-", so it is passed as is.
        const run = yield* git(repo, [
          "blame",
          "--porcelain",
          "--no-textconv",
          "-L",
          `${query.startLine},${last}`,
          ...(name === undefined ? [] : [name]),
          "--",
          query.path
        ])
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

    const show = (repo: Repository, query: ShowQuery): Effect.Effect<Show.Output, RevisionError> =>
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
          Effect.catch((e) => Effect.flatMap(classify(repo, rev, e.detail), Effect.fail))
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

    return { kind: "native", status, log, diff, blame, show } satisfies GitBackendShape
  }
)
