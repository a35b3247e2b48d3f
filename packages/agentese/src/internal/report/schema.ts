/**
 * The report's format: the facts a gatherer found, the attribution of every
 * tool call and file read, and the four sections. One schema for the JSON
 * form and the Markdown's front matter, whichever author (the deterministic
 * pipeline or a model) wrote it. `Report.ts` re-exports and documents it.
 *
 * @internal
 */
import { Schema } from "effect"

export const Section = Schema.Struct({
  /** The section in one or two sentences. */
  summary: Schema.String,
  /** The details, one bullet each (Markdown inline code allowed). */
  points: Schema.Array(Schema.String)
})

export const ToolCall = Schema.Struct({
  /** The road's call id: the key of the call's audit records and trace. */
  callId: Schema.String,
  path: Schema.String,
  /** The input as the audit store summarizes it: canonical JSON, cut at 200 characters. */
  input: Schema.String,
  /** Why the call was made (`structure`, `manifest`, `git state`, …). */
  purpose: Schema.String,
  ok: Schema.Boolean,
  /** The failure, when the call did not succeed. */
  error: Schema.optionalKey(Schema.Struct({ tag: Schema.String, kind: Schema.String, message: Schema.String })),
  durationMillis: Schema.Number,
  /** The agent step that made it (a model's report): its number and id. */
  step: Schema.optionalKey(Schema.Int),
  stepId: Schema.optionalKey(Schema.String),
  /** The size of its result's text in bytes, when it succeeded. */
  resultBytes: Schema.optionalKey(Schema.Int)
})

/** The calls of one tool in the report's making. */
export const ToolCount = Schema.Struct({
  path: Schema.String,
  calls: Schema.Int,
  ok: Schema.Int,
  failed: Schema.Int
})

/** How far the report can be trusted, from how its facts were gathered. */
export const Confidence = Schema.Struct({
  level: Schema.Literals(["high", "medium", "low"]),
  /** Why, in a sentence. */
  reason: Schema.String
})

export const FileRead = Schema.Struct({
  path: Schema.String,
  /** The lines read, when not the whole file. */
  lines: Schema.optionalKey(Schema.Struct({ from: Schema.Int, to: Schema.Int })),
  /** The tool that read it (`world.tools.file.read`, `world.tools.git.blame`). */
  via: Schema.String,
  callId: Schema.String
})

export const Attribution = Schema.Struct({
  /** The session every call was made in. */
  session: Schema.String,
  filesRead: Schema.Array(FileRead),
  toolCalls: Schema.Array(ToolCall),
  /** The calls per tool, most used first (absent from reports written before). */
  perTool: Schema.optionalKey(Schema.Array(ToolCount)),
  confidence: Schema.optionalKey(Confidence)
})

/**
 * The attribution's counts per tool and its confidence: high when every call
 * gave its result and the author finished, medium when some calls failed or
 * the findings were written after a budget ran out, low when the author could
 * not finish or no call gave a result.
 */
export const tallied = (
  attribution: Omit<typeof Attribution.Type, "perTool" | "confidence">,
  stopped: { readonly incomplete?: string | undefined; readonly budgetRanOut?: string | undefined } = {}
): typeof Attribution.Type => {
  const counts = new Map<string, { path: string; calls: number; ok: number; failed: number }>()
  for (const c of attribution.toolCalls) {
    let count = counts.get(c.path)
    if (count === undefined) {
      count = { path: c.path, calls: 0, ok: 0, failed: 0 }
      counts.set(c.path, count)
    }
    count.calls++
    if (c.ok) count.ok++
    else count.failed++
  }
  const perTool = [...counts.values()].sort((a, b) => b.calls - a.calls || (a.path < b.path ? -1 : 1))
  const calls = attribution.toolCalls.length
  const failed = attribution.toolCalls.filter((c) => !c.ok).length
  const confidence: typeof Confidence.Type =
    stopped.incomplete !== undefined
      ? { level: "low", reason: `The author did not finish: ${stopped.incomplete}` }
      : calls > 0 && failed === calls
        ? { level: "low", reason: `None of the ${calls} tool calls gave a result.` }
        : stopped.budgetRanOut !== undefined
          ? {
              level: "medium",
              reason: `The findings were written when ${stopped.budgetRanOut}; what was not looked at is missing.`
            }
          : failed > 0
            ? { level: "medium", reason: `${failed} of ${calls} tool calls gave no result.` }
            : { level: "high", reason: `Every one of the ${calls} tool calls gave its result.` }
  return { ...attribution, perTool, confidence }
}

export const Structure = Schema.Struct({
  /** Nothing at all in the folder (no files, no repository). */
  empty: Schema.Boolean,
  /** The top-level entries (hidden ones included), directories first. */
  entries: Schema.Array(Schema.Struct({ name: Schema.String, isDir: Schema.Boolean })),
  /** Files in the tree, ignored ones (`.gitignore`, `node_modules`, …) left out; `null` when not counted. */
  files: Schema.NullOr(Schema.Int),
  /** The most recently modified files, newest first. */
  recentlyModified: Schema.Array(Schema.String),
  /** The project types the top-level manifests show, primary first. */
  projectTypes: Schema.Array(Schema.Struct({ type: Schema.String, file: Schema.String }))
})

export const Manifest = Schema.Struct({
  path: Schema.String,
  type: Schema.String,
  name: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  dependencies: Schema.Array(Schema.String),
  devDependencies: Schema.Array(Schema.String),
  scripts: Schema.Array(Schema.Struct({ name: Schema.String, command: Schema.String })),
  workspaces: Schema.Array(Schema.String)
})

export const CommitFact = Schema.Struct({
  shortHash: Schema.String,
  date: Schema.String,
  author: Schema.String,
  subject: Schema.String,
  merge: Schema.Boolean,
  files: Schema.Int,
  additions: Schema.Int,
  deletions: Schema.Int,
  /** The areas (top directories) it touched, most files first. */
  areas: Schema.Array(Schema.String)
})

export const Area = Schema.Struct({
  /** A top directory (`src/report`, `packages/tools`), or `(root)` for top-level files. */
  area: Schema.String,
  /** Non-merge commits among those examined that touched it. */
  commits: Schema.Int,
  /** Distinct files changed in it. */
  files: Schema.Int,
  /** The newest commit that touched it. */
  lastDate: Schema.String
})

export const Churn = Schema.Struct({
  path: Schema.String,
  commits: Schema.Int,
  additions: Schema.Int,
  deletions: Schema.Int
})

export const GitFacts = Schema.Union([
  Schema.Struct({
    available: Schema.Literal(true),
    branch: Schema.NullOr(Schema.String),
    detached: Schema.Boolean,
    head: Schema.NullOr(Schema.String),
    noCommits: Schema.Boolean,
    clean: Schema.Boolean,
    staged: Schema.Int,
    unstaged: Schema.Int,
    untracked: Schema.Int,
    conflicted: Schema.Int,
    /** Some of the uncommitted paths (conflicted, staged, unstaged, then untracked). */
    changedPaths: Schema.Array(Schema.String),
    /** The commits examined, newest first. */
    commits: Schema.Array(CommitFact),
    /** More commits exist than were examined. */
    moreCommits: Schema.Boolean,
    areas: Schema.Array(Area),
    mostChanged: Schema.Array(Churn),
    /** Why the history is missing or partial, when it is. */
    historyNote: Schema.optionalKey(Schema.String)
  }),
  Schema.Struct({
    available: Schema.Literal(false),
    /** Why not (not a repository, a refusal, a failure), as the tool said it. */
    reason: Schema.String,
    /** There is no `.git` at all (rather than one the tools may not read, or a refusal). */
    noRepository: Schema.Boolean
  })
])

export const Todo = Schema.Struct({
  path: Schema.String,
  line: Schema.Int,
  kind: Schema.String,
  text: Schema.String,
  /** The blame was looked up for this line (the budget of calls covers the first windows only). */
  blamed: Schema.Boolean,
  /** The commit that last changed the line; `null` when uncommitted or not looked up. */
  commit: Schema.NullOr(Schema.Struct({ shortHash: Schema.String, author: Schema.String, date: Schema.String })),
  ageDays: Schema.NullOr(Schema.Int)
})

export const Todos = Schema.Struct({
  searched: Schema.Boolean,
  /** Markers found (up to the search's limit). */
  found: Schema.Int,
  truncated: Schema.Boolean,
  items: Schema.Array(Todo),
  note: Schema.optionalKey(Schema.String)
})

export const Devlog = Schema.Struct({
  path: Schema.String,
  totalLines: Schema.Int,
  from: Schema.Int,
  to: Schema.Int,
  /** The Markdown headings of the lines read, last ones last. */
  headings: Schema.Array(Schema.String),
  /** The last non-empty lines read. */
  lastLines: Schema.Array(Schema.String),
  /** Open items in the lines read (`- [ ] …`, `Next: …`, `TODO …`), last ones last. */
  openItems: Schema.Array(Schema.String),
  /** The lines read, without line numbers. */
  text: Schema.String
})

export const Checks = Schema.Struct({
  searched: Schema.Boolean,
  /** Test files and files in test directories. */
  testFiles: Schema.Int,
  /** The search stopped at its limit: there may be more. */
  truncated: Schema.Boolean,
  /** Where the tests live (their top directories), most files first. */
  testDirs: Schema.Array(Schema.String),
  ciFiles: Schema.Array(Schema.String),
  ciSystems: Schema.Array(Schema.String)
})

export const Facts = Schema.Struct({
  structure: Structure,
  manifest: Schema.NullOr(Manifest),
  git: GitFacts,
  todos: Todos,
  devlog: Schema.NullOr(Devlog),
  checks: Checks,
  /** Facts that could not be gathered, and why. */
  unavailable: Schema.Array(Schema.String)
})

export const Report = Schema.Struct({
  protocol: Schema.Literal("project-resurrection"),
  /** The format's version. */
  version: Schema.Literal(1),
  project: Schema.String,
  root: Schema.String,
  generatedAt: Schema.String,
  /** Who wrote it: the deterministic pipeline, or a model following the protocol. */
  mode: Schema.Literals(["deterministic", "model"]),
  model: Schema.optionalKey(Schema.String),
  durationMillis: Schema.Number,
  /** What the project is and how to start it, in a sentence or two, from its manifest. */
  about: Schema.optionalKey(Schema.String),
  lastActiveArea: Section,
  currentState: Section,
  nextSteps: Section,
  basedOn: Section,
  attribution: Attribution,
  /** The facts the sections were written from (the deterministic path always has them). */
  facts: Schema.optionalKey(Facts),
  /** A model's report says here what its budget did not let it look at. */
  incomplete: Schema.optionalKey(Schema.String)
})
