/**
 * The deterministic gatherer of the Project Resurrection protocol: a fixed
 * composition of ugent tools, every call made through the road
 * (`Invoke.invoke`) in one session, so each is gated, audited and traced
 * like a model's call and the report can cite it by call id.
 *
 * Three rounds, the calls of a round run concurrently (the attribution keeps
 * a fixed order):
 *
 * 1. `file.list` of the root (structure, manifests, a DEVLOG) and
 *    `git.status` (branch, uncommitted work; "not a repository" ends the git
 *    facts). An empty folder that is no repository stops here.
 * 2. `file.glob` of every file (count, the newest), `file.read` of the
 *    primary manifest, `git.log` of the last 100 commits with their files
 *    (areas, most-changed files), `search.grep` for TODO and FIXME comments,
 *    `file.glob` for tests and CI, `file.read` of the DEVLOG's size.
 * 3. `git.blame` of up to six windows of TODO lines (their age), and
 *    `file.read` of the DEVLOG's last 500 lines.
 *
 * At most 15 calls: 2 + 6 + 7.
 *
 * @internal
 */
import { Clock, Effect, Schema } from "effect"
import * as Invoke from "../../Invoke.ts"
import * as Manifest from "./manifest.ts"
import type * as S from "./schema.ts"

type Facts = typeof S.Facts.Type
type ToolCall = typeof S.ToolCall.Type
type FileRead = typeof S.FileRead.Type
type GitFacts = typeof S.GitFacts.Type
type Todo = typeof S.Todo.Type

/** What the gatherer hands the composer. */
export interface Gathered {
  readonly facts: Facts
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly filesRead: ReadonlyArray<FileRead>
}

/** The knobs of the pipeline; the defaults keep it within the protocol's spirit (one pass, ~15 calls). */
export interface Limits {
  /** Commits examined for areas and most-changed files (at most 100, git.log's limit). */
  readonly commits: number
  /** Files listed per commit (the statistics count them all). */
  readonly filesPerCommit: number
  /** Markers (the two words of `todoPattern`) looked for. */
  readonly todos: number
  /** `git.blame` calls, each a window of nearby marker lines. */
  readonly blames: number
  /** Lines per blame window. */
  readonly blameWindow: number
  /** DEVLOG lines read from its end. */
  readonly devlogLines: number
}

export const defaultLimits: Limits = {
  commits: 100,
  filesPerCommit: 50,
  todos: 200,
  blames: 6,
  blameWindow: 60,
  devlogLines: 500
}

/**
 * A marker in a comment: one of the two words right after a comment opener
 * (`//`, `#`, `/*`, `*`, `<!--`, `--`, `;`) or at the start of a line, in
 * capitals. Prose that only names the words (as this sentence does) is not
 * a marker.
 */
export const todoPattern = "(?:^|//|#|/\\*|\\*|<!--|--|;)\\s*(TODO|FIXME)\\b"

const marker = new RegExp(todoPattern)

/**
 * Whether a line's marker is data, not a comment: its comment opener sits
 * inside a string literal on the line (a test fixture's `"// TODO: tea\n"`),
 * seen as an odd number of unescaped quotes of one kind before it.
 */
export const isData = (line: string): boolean => {
  const at = marker.exec(line)?.index
  if (at === undefined) return false
  const before = line.slice(0, at).replace(/\\./g, "")
  return ['"', "'", "`"].some((q) => before.split(q).length % 2 === 0)
}

/** Test files and directories, and the CI configurations of the common services, in one glob. */
export const checksPattern =
  "{**/test/**,**/tests/**,**/__tests__/**,**/spec/**,**/*.test.*,**/*.spec.*,**/*_test.*,**/test_*.py," +
  ".github/workflows/*,.gitlab-ci.yml,.circleci/*,.travis.yml,Jenkinsfile,azure-pipelines.yml," +
  "bitbucket-pipelines.yml,.buildkite/*,.drone.yml,.woodpecker.yml,.woodpecker/*,.ci/*}"

const ciSystems: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\.github\/workflows\//, "GitHub Actions"],
  [/^\.gitlab-ci\.yml$/, "GitLab CI"],
  [/^\.circleci\//, "CircleCI"],
  [/^\.travis\.yml$/, "Travis CI"],
  [/^Jenkinsfile$/, "Jenkins"],
  [/^azure-pipelines\.yml$/, "Azure Pipelines"],
  [/^bitbucket-pipelines\.yml$/, "Bitbucket Pipelines"],
  [/^\.buildkite\//, "Buildkite"],
  [/^\.drone\.yml$/, "Drone"],
  [/^\.woodpecker(\.yml$|\/)/, "Woodpecker"],
  [/^\.ci\//, "CI scripts (.ci)"]
]

const devlogName = /^dev[-_ ]?log(\.(md|markdown|txt|org|rst|adoc))?$/i

// The parts of the tools' results the gatherer uses (other fields are ignored when decoding).
const ListResult = Schema.Struct({
  entries: Schema.Array(Schema.Struct({ name: Schema.String, isDir: Schema.Boolean })),
  total: Schema.Int
})
const GlobResult = Schema.Struct({
  files: Schema.Array(Schema.String),
  totalMatches: Schema.Int,
  truncated: Schema.Boolean
})
const ReadResult = Schema.Struct({
  content: Schema.String,
  startLine: Schema.Int,
  endLine: Schema.Int,
  totalLines: Schema.Int
})
const Paths = Schema.Array(Schema.Struct({ path: Schema.String }))
const StatusResult = Schema.Struct({
  branch: Schema.NullOr(Schema.String),
  detached: Schema.Boolean,
  head: Schema.NullOr(Schema.String),
  noCommits: Schema.Boolean,
  clean: Schema.Boolean,
  staged: Paths,
  unstaged: Paths,
  untracked: Schema.Array(Schema.String),
  conflicted: Schema.Array(Schema.String),
  totals: Schema.Struct({ staged: Schema.Int, unstaged: Schema.Int, untracked: Schema.Int, conflicted: Schema.Int })
})
const LogResult = Schema.Struct({
  commits: Schema.Array(
    Schema.Struct({
      shortHash: Schema.String,
      parents: Schema.Array(Schema.String),
      author: Schema.String,
      date: Schema.String,
      subject: Schema.String,
      filesChanged: Schema.Int,
      stats: Schema.optionalKey(Schema.Struct({ additions: Schema.Int, deletions: Schema.Int })),
      diff: Schema.optionalKey(
        Schema.Struct({
          files: Schema.Array(Schema.Struct({ path: Schema.String, additions: Schema.Int, deletions: Schema.Int })),
          omittedFiles: Schema.Int
        })
      )
    })
  ),
  truncated: Schema.Boolean
})
const GrepResult = Schema.Struct({
  matches: Schema.Array(
    Schema.Struct({
      path: Schema.String,
      matches: Schema.Array(Schema.Struct({ line: Schema.Int, text: Schema.String }))
    })
  ),
  totalMatches: Schema.Int,
  truncated: Schema.Boolean
})
const BlameResult = Schema.Struct({
  lines: Schema.Array(
    Schema.Struct({
      line: Schema.Int,
      commit: Schema.NullOr(Schema.Struct({ shortHash: Schema.String, author: Schema.String, date: Schema.String }))
    })
  )
})

/** The audit store's summary of an input: canonical JSON (keys sorted), cut at 200 characters. */
export const inputSummary = (input: unknown): string => {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : typeof v === "object" && v !== null
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])])
          )
        : v
  const text = JSON.stringify(sorted(input)) ?? ""
  return text.length <= 200 ? text : `${text.slice(0, 199)}…`
}

/** The area of a path: its top directory, two levels deep under a container such as `packages/` or `src/`. */
export const areaOf = (path: string): string => {
  const parts = path.split("/")
  if (parts.length === 1) return "(root)"
  const containers = [
    "packages",
    "apps",
    "libs",
    "lib",
    "src",
    "crates",
    "modules",
    "services",
    "cmd",
    "internal",
    "pkg"
  ]
  return containers.includes(parts[0]!) && parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!
}

const numbered = /^\s*\d+\t/

/** The lines of a `file.read` result, without their numbers. */
const linesOf = (content: string): Array<string> =>
  content === "" ? [] : content.split("\n").map((l) => l.replace(numbered, ""))

const daysBetween = (from: string, nowMillis: number): number | null => {
  const at = Date.parse(from)
  return Number.isNaN(at) ? null : Math.max(0, Math.floor((nowMillis - at) / 86_400_000))
}

type Outcome =
  | { readonly _tag: "Ok"; readonly value: unknown }
  | {
      readonly _tag: "Failed"
      /** The reason with the path: "world.tools.git.log failed: …". */
      readonly why: string
      /** The tool's own message. */
      readonly message: string
      readonly tag: string
      /** The failure's fields (`reason` of NotARepository, …). */
      readonly error?: Readonly<Record<string, unknown>>
    }

/**
 * Runs the pipeline through the road in context, in `session`. Never fails:
 * a call that does not succeed becomes a fact that is unavailable, with the
 * tool's own reason.
 */
export const gather = (
  session: string,
  limits: Limits = defaultLimits
): Effect.Effect<Gathered, never, Invoke.Services> =>
  Effect.gen(function* () {
    const calls: Array<readonly [order: number, call: ToolCall]> = []
    const files: Array<readonly [order: number, read: FileRead]> = []
    const unavailable: Array<string> = []

    /** One call through the road; its outcome decoded with `schema`, or the reason it is not there. */
    const call = <A, I>(
      order: number,
      path: string,
      input: Record<string, unknown>,
      purpose: string,
      schema: Schema.Codec<A, I>
    ): Effect.Effect<
      { readonly callId: string; readonly outcome: Outcome; readonly value?: A },
      never,
      Invoke.Services
    > =>
      Effect.gen(function* () {
        const started = yield* Clock.currentTimeNanos
        const outcome = yield* Invoke.invoke({ path, input, session })
        const durationMillis = Number((yield* Clock.currentTimeNanos) - started) / 1e6
        calls.push([
          order,
          {
            callId: outcome.callId,
            path,
            input: inputSummary(input),
            purpose,
            ok: outcome.ok,
            ...(outcome.ok
              ? {}
              : { error: { tag: outcome.error._tag, kind: outcome.kind, message: outcome.error.message } }),
            durationMillis: Math.round(durationMillis * 10) / 10
          }
        ])
        if (!outcome.ok) {
          return {
            callId: outcome.callId,
            outcome: {
              _tag: "Failed",
              why: `${path} failed: ${outcome.error.message}`,
              message: outcome.error.message,
              tag: outcome.error._tag,
              error: outcome.error
            }
          }
        }
        const result = outcome.result as { readonly overBudget?: unknown; readonly memoryId?: unknown }
        if (typeof result === "object" && result !== null && result.overBudget === true) {
          const why = `${path} returned more than the road's result budget (kept in working memory as ${String(result.memoryId)})`
          return { callId: outcome.callId, outcome: { _tag: "Failed", why, message: why, tag: "OverBudget" } }
        }
        const decoded = Schema.decodeUnknownOption(schema)(outcome.result)
        if (decoded._tag === "None") {
          return {
            callId: outcome.callId,
            outcome: {
              _tag: "Failed",
              why: `${path} returned a result of an unexpected shape`,
              message: "a result of an unexpected shape",
              tag: "Unexpected"
            }
          }
        }
        return { callId: outcome.callId, outcome: { _tag: "Ok", value: decoded.value }, value: decoded.value }
      })

    const now = yield* Clock.currentTimeMillis

    // Round 1: what is here, and whether it is a repository.
    const [list, status] = yield* Effect.all(
      [
        call(1, "world.tools.file.list", { path: ".", hidden: true, limit: 1000 }, "structure", ListResult),
        call(2, "world.tools.git.status", { limit: 20 }, "git state", StatusResult)
      ],
      { concurrency: "unbounded" }
    )
    const entries = list.value?.entries ?? []
    if (list.value === undefined && list.outcome._tag === "Failed") unavailable.push(list.outcome.why)
    const empty = list.value !== undefined && entries.length === 0 && status.value === undefined
    const structureBase = {
      empty,
      entries: [...entries]
        .sort((a, b) => Number(b.isDir) - Number(a.isDir) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((e) => ({ name: e.name, isDir: e.isDir }))
    }
    const gitMissing = (): GitFacts => {
      const failure = status.outcome._tag === "Failed" ? status.outcome : undefined
      return {
        available: false,
        reason: failure?.message ?? "git.status gave no answer",
        noRepository: failure?.tag === "NotARepository" && failure.error?.reason === "no-git-dir"
      }
    }
    if (empty) {
      return {
        facts: {
          structure: { ...structureBase, files: 0, recentlyModified: [], projectTypes: [] },
          manifest: null,
          git: gitMissing(),
          todos: { searched: false, found: 0, truncated: false, items: [], note: "the folder is empty" },
          devlog: null,
          checks: { searched: false, testFiles: 0, truncated: false, testDirs: [], ciFiles: [], ciSystems: [] },
          unavailable
        },
        toolCalls: calls.sort((a, b) => a[0] - b[0]).map(([, c]) => c),
        filesRead: []
      }
    }

    const topFiles = entries.filter((e) => !e.isDir).map((e) => e.name)
    const found = Manifest.markers(topFiles)
    const primary = Manifest.readable(found)
    const devlogFile = topFiles.filter((n) => devlogName.test(n)).sort()[0]
    const repo = status.value
    const hasHistory = repo !== undefined && !repo.noCommits

    // Round 2: everything that needs only round 1.
    const noCall = Effect.succeed(undefined)
    const [glob, manifestRead, log, grep, checks, devlogSize] = yield* Effect.all(
      [
        call(
          3,
          "world.tools.file.glob",
          { pattern: "**/*", sort: "modified", limit: 10, hidden: true, respectGitignore: true },
          "structure: files",
          GlobResult
        ),
        primary === undefined
          ? noCall
          : call(4, "world.tools.file.read", { path: primary.file }, "manifest", ReadResult),
        hasHistory
          ? call(
              5,
              "world.tools.git.log",
              {
                limit: Math.min(100, limits.commits),
                includeDiff: true,
                maxDiffSize: 0,
                maxFiles: limits.filesPerCommit
              },
              "history",
              LogResult
            )
          : noCall,
        call(
          6,
          "world.tools.search.grep",
          {
            pattern: todoPattern,
            outputMode: "content",
            context: 0,
            caseSensitive: true,
            maxMatches: limits.todos
          },
          "TODO and FIXME",
          GrepResult
        ),
        call(
          7,
          "world.tools.file.glob",
          { pattern: checksPattern, hidden: true, limit: 500, respectGitignore: true },
          "tests and CI",
          GlobResult
        ),
        devlogFile === undefined
          ? noCall
          : call(8, "world.tools.file.read", { path: devlogFile, limit: 0 }, "DEVLOG size", ReadResult)
      ],
      { concurrency: "unbounded" }
    )
    const failed = (r: { readonly outcome: Outcome } | undefined) => {
      if (r !== undefined && r.outcome._tag === "Failed") unavailable.push(r.outcome.why)
    }
    for (const r of [glob, manifestRead, log, grep, checks, devlogSize]) failed(r)

    // The TODO markers, and the windows of nearby lines whose blame dates them.
    const todoItems: Array<{ path: string; line: number; kind: string; text: string }> = []
    for (const file of grep.value?.matches ?? []) {
      for (const m of file.matches) {
        if (isData(m.text)) continue
        const kind = /\b(TODO|FIXME)\b/.exec(m.text)?.[1] ?? "TODO"
        todoItems.push({ path: file.path, line: m.line, kind, text: m.text.trim().slice(0, 200) })
      }
    }
    const untracked = new Set(repo?.untracked ?? [])
    const windows: Array<{ path: string; from: number; to: number; count: number }> = []
    if (hasHistory) {
      const byPath = new Map<string, Array<number>>()
      for (const t of todoItems) {
        if (untracked.has(t.path)) continue
        byPath.set(t.path, [...(byPath.get(t.path) ?? []), t.line])
      }
      for (const [path, lines] of byPath) {
        lines.sort((a, b) => a - b)
        let start = 0
        for (let i = 1; i <= lines.length; i++) {
          if (i === lines.length || lines[i]! - lines[start]! >= limits.blameWindow) {
            windows.push({ path, from: lines[start]!, to: lines[i - 1]!, count: i - start })
            start = i
          }
        }
      }
      windows.sort((a, b) => b.count - a.count || (a.path < b.path ? -1 : a.path > b.path ? 1 : a.from - b.from))
    }
    const chosen = windows.slice(0, limits.blames)
    const devlogTotal = devlogSize?.value?.totalLines ?? 0
    const devlogFrom = Math.max(1, devlogTotal - limits.devlogLines + 1)

    // Round 3: blame of the chosen windows, and the DEVLOG's tail.
    const [blames, devlogTail] = yield* Effect.all(
      [
        Effect.forEach(
          chosen,
          (w, i) =>
            call(
              10 + i,
              "world.tools.git.blame",
              { path: w.path, startLine: w.from, endLine: w.to, maxLines: limits.blameWindow },
              "TODO age",
              BlameResult
            ),
          { concurrency: "unbounded" }
        ),
        devlogFile === undefined || devlogTotal === 0
          ? noCall
          : call(
              9,
              "world.tools.file.read",
              { path: devlogFile, offset: devlogFrom, limit: limits.devlogLines },
              "DEVLOG tail",
              ReadResult
            )
      ],
      { concurrency: "unbounded" }
    )
    for (const r of blames) failed(r)
    failed(devlogTail)

    // Files read, in the order of the calls.
    if (manifestRead?.value !== undefined && primary !== undefined) {
      files.push([4, { path: primary.file, via: "world.tools.file.read", callId: manifestRead.callId }])
    }
    if (devlogTail?.value !== undefined && devlogFile !== undefined) {
      const v = devlogTail.value
      files.push([
        9,
        {
          path: devlogFile,
          ...(v.startLine > 1 ? { lines: { from: v.startLine, to: v.endLine } } : {}),
          via: "world.tools.file.read",
          callId: devlogTail.callId
        }
      ])
    }
    const dated = new Map<string, Todo["commit"]>()
    for (const [i, b] of blames.entries()) {
      const w = chosen[i]!
      if (b.value === undefined) continue
      files.push([
        10 + i,
        { path: w.path, lines: { from: w.from, to: w.to }, via: "world.tools.git.blame", callId: b.callId }
      ])
      for (const l of b.value.lines) {
        dated.set(
          `${w.path}:${l.line}`,
          l.commit === null ? null : { shortHash: l.commit.shortHash, author: l.commit.author, date: l.commit.date }
        )
      }
    }

    const todos: Array<Todo> = todoItems.map((t) => {
      const key = `${t.path}:${t.line}`
      const blamed = dated.has(key)
      const commit = dated.get(key) ?? null
      return { ...t, blamed, commit, ageDays: commit === null ? null : daysBetween(commit.date, now) }
    })

    const manifestFacts =
      manifestRead?.value !== undefined && primary !== undefined
        ? Manifest.parse(primary.file, linesOf(manifestRead.value.content).join("\n"))
        : undefined
    if (manifestRead?.value !== undefined && primary !== undefined && manifestFacts === undefined) {
      unavailable.push(`${primary.file} could not be parsed`)
    }

    const checkFiles = checks.value?.files ?? []
    const ciFiles = checkFiles.filter((f) => ciSystems.some(([re]) => re.test(f)))
    const testFiles = checkFiles.filter((f) => !ciFiles.includes(f))
    const testDirCounts = new Map<string, number>()
    for (const f of testFiles) {
      const parts = f.split("/")
      const at = parts.findIndex((p) => /^(test|tests|__tests__|spec)$/.test(p))
      const dir = at >= 0 ? parts.slice(0, at + 1).join("/") : parts.length > 1 ? parts.slice(0, -1).join("/") : "."
      testDirCounts.set(dir, (testDirCounts.get(dir) ?? 0) + 1)
    }

    const git: GitFacts =
      repo === undefined
        ? gitMissing()
        : {
            available: true,
            branch: repo.branch,
            detached: repo.detached,
            head: repo.head,
            noCommits: repo.noCommits,
            clean: repo.clean,
            staged: repo.totals.staged,
            unstaged: repo.totals.unstaged,
            untracked: repo.totals.untracked,
            conflicted: repo.totals.conflicted,
            changedPaths: [
              ...repo.conflicted,
              ...repo.staged.map((c) => c.path),
              ...repo.unstaged.map((c) => c.path),
              ...repo.untracked
            ]
              .filter((p, i, all) => all.indexOf(p) === i)
              .slice(0, 20),
            ...history(log?.value, log?.outcome, hasHistory)
          }

    return {
      facts: {
        structure: {
          ...structureBase,
          files: glob.value?.totalMatches ?? null,
          recentlyModified: [...(glob.value?.files ?? [])],
          projectTypes: found.map((m) => ({ type: m.type, file: m.file }))
        },
        manifest:
          manifestFacts === undefined || primary === undefined
            ? null
            : { path: primary.file, type: primary.type, ...manifestFacts },
        git,
        todos: {
          searched: grep.value !== undefined,
          found: todoItems.length,
          truncated: grep.value?.truncated ?? false,
          items: todos,
          ...(windows.length > chosen.length
            ? {
                note: `${windows.length - chosen.length} more groups of markers were not blamed (the report makes at most ${limits.blames} blame calls)`
              }
            : {})
        },
        devlog:
          devlogFile === undefined || devlogSize?.value === undefined
            ? null
            : devlogFacts(devlogFile, devlogTotal, devlogTail?.value),
        checks: {
          searched: checks.value !== undefined,
          testFiles: testFiles.length,
          truncated: checks.value?.truncated ?? false,
          testDirs: [...testDirCounts.entries()]
            .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
            .map(([d]) => d)
            .slice(0, 8),
          ciFiles,
          ciSystems: [...new Set(ciFiles.flatMap((f) => ciSystems.filter(([re]) => re.test(f)).map(([, n]) => n)))]
        },
        unavailable
      },
      toolCalls: calls.sort((a, b) => a[0] - b[0]).map(([, c]) => c),
      filesRead: files.sort((a, b) => a[0] - b[0]).map(([, f]) => f)
    }
  })

type History = Pick<
  Extract<GitFacts, { available: true }>,
  "commits" | "moreCommits" | "areas" | "mostChanged" | "historyNote"
>

/** Areas and most-changed files over the commits examined (merges left out: they repeat their branch's changes). */
const history = (
  log: typeof LogResult.Type | undefined,
  outcome: Outcome | undefined,
  hasHistory: boolean
): History => {
  if (log === undefined) {
    return {
      commits: [],
      moreCommits: false,
      areas: [],
      mostChanged: [],
      ...(hasHistory
        ? { historyNote: outcome?._tag === "Failed" ? outcome.why : "the history was not read" }
        : { historyNote: "the repository has no commits yet" })
    }
  }
  const areas = new Map<string, { commits: number; files: Set<string>; lastDate: string }>()
  const churn = new Map<string, { commits: number; additions: number; deletions: number }>()
  let omitted = 0
  const commits = log.commits.map((c) => {
    const merge = c.parents.length > 1
    const files = c.diff?.files ?? []
    omitted += c.diff?.omittedFiles ?? 0
    const perArea = new Map<string, number>()
    for (const f of files) perArea.set(areaOf(f.path), (perArea.get(areaOf(f.path)) ?? 0) + 1)
    if (!merge) {
      for (const [area] of perArea) {
        const a = areas.get(area) ?? { commits: 0, files: new Set<string>(), lastDate: c.date }
        a.commits++
        areas.set(area, a)
      }
      for (const f of files) {
        areas.get(areaOf(f.path))!.files.add(f.path)
        const x = churn.get(f.path) ?? { commits: 0, additions: 0, deletions: 0 }
        x.commits++
        x.additions += f.additions
        x.deletions += f.deletions
        churn.set(f.path, x)
      }
    }
    return {
      shortHash: c.shortHash,
      date: c.date,
      author: c.author,
      subject: c.subject,
      merge,
      files: c.filesChanged,
      additions: c.stats?.additions ?? 0,
      deletions: c.stats?.deletions ?? 0,
      areas: [...perArea.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([a]) => a)
    }
  })
  return {
    commits,
    moreCommits: log.truncated,
    areas: [...areas.entries()]
      .map(([area, a]) => ({ area, commits: a.commits, files: a.files.size, lastDate: a.lastDate }))
      .sort((a, b) => b.commits - a.commits || (a.lastDate > b.lastDate ? -1 : a.lastDate < b.lastDate ? 1 : 0)),
    mostChanged: [...churn.entries()]
      .map(([path, x]) => ({ path, ...x }))
      .sort(
        (a, b) =>
          b.commits - a.commits ||
          b.additions + b.deletions - (a.additions + a.deletions) ||
          (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
      )
      .slice(0, 10),
    ...(omitted > 0
      ? { historyNote: `${omitted} changed files of large commits were not listed: the areas count the rest` }
      : {})
  }
}

const devlogFacts = (
  path: string,
  totalLines: number,
  tail: typeof ReadResult.Type | undefined
): typeof S.Devlog.Type => {
  const lines = tail === undefined ? [] : linesOf(tail.content)
  const nonEmpty = lines.filter((l) => l.trim() !== "")
  return {
    path,
    totalLines,
    from: tail?.startLine ?? 0,
    to: tail?.endLine ?? 0,
    headings: lines.filter((l) => /^#{1,6}\s/.test(l)).slice(-5),
    lastLines: nonEmpty.slice(-8),
    openItems: lines
      .filter((l) => /^\s*[-*]\s*\[ \]/.test(l) || /^\s*(?:[-*]\s*)?(?:next(?: steps?)?|todo|fixme)\b\s*[:-]/i.test(l))
      .map((l) => l.trim())
      .slice(-5),
    text: lines.join("\n")
  }
}
