/**
 * `Report` is the Project Resurrection protocol: a status report of a
 * dormant project, to pick it up again. It says where the work was last
 * (**Last active area**), what state it is in (**Current state**), what to
 * do first (**Suggested next steps**), and what it read to say so (**Based
 * on**), with every file read and every tool call attributed by its call id
 * (YAML front matter in the Markdown, the same fields in the JSON).
 *
 * Two parts, so that another author can take the place of the first: an
 * {@link Author} gathers facts and writes the sections; {@link markdown} and
 * {@link save} render and keep the result. The {@link deterministic} author
 * needs no model: a fixed composition of ugent tools run through the road
 * (`Invoke.invoke`, one session, so every call is gated, audited and traced)
 * gathers the structure and project type, the manifest, the git branch and
 * uncommitted work, the last 100 commits and the areas and files they
 * touched, TODO and FIXME comments dated by blame, the DEVLOG's last 500
 * lines, and the tests and CI present, in at most 15 calls; fixed rules
 * write the sections. A model-driven author follows {@link protocol} as
 * guidance within its budgets and returns the same {@link Report}.
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import { closeSync, constants, openSync, writeFileSync } from "node:fs"
import { basename, join, resolve } from "node:path"
import { ToolError } from "@ugent/core"
import { Clock, DateTime, type Duration, Effect, Layer, Schema } from "effect"
import type { AiError } from "effect/ai"
import type * as Agent from "./Agent.ts"
import * as compose from "./internal/report/compose.ts"
import * as gatherer from "./internal/report/gather.ts"
import * as md from "./internal/report/markdown.ts"
import * as modelAuthor from "./internal/report/model.ts"
import * as S from "./internal/report/schema.ts"
import type * as Invoke from "./Invoke.ts"
import * as Server from "./Server.ts"
import * as State from "./State.ts"

/**
 * A section of the report: a summary of a sentence or two, and its points.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Section: typeof S.Section = S.Section

/**
 * @category models
 * @since 0.2.0
 */
export type Section = typeof S.Section.Type

/**
 * One tool call the report made: its call id (the key of its audit records
 * and trace), path, input as the audit store summarizes it, purpose and
 * outcome.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ToolCall: typeof S.ToolCall = S.ToolCall

/**
 * @category models
 * @since 0.2.0
 */
export type ToolCall = typeof S.ToolCall.Type

/**
 * One file whose content the report used, the lines read, and the call that
 * read it.
 *
 * @category schemas
 * @since 0.2.0
 */
export const FileRead: typeof S.FileRead = S.FileRead

/**
 * @category models
 * @since 0.2.0
 */
export type FileRead = typeof S.FileRead.Type

/**
 * What the report read and how: the session, the files, the tool calls.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Attribution: typeof S.Attribution = S.Attribution

/**
 * @category models
 * @since 0.2.0
 */
export type Attribution = typeof S.Attribution.Type

/**
 * The facts a gatherer found: structure, manifest, git (or why it is
 * unavailable), TODO and FIXME markers with their age, the DEVLOG's tail,
 * tests and CI, and what could not be gathered.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Facts: typeof S.Facts = S.Facts

/**
 * @category models
 * @since 0.2.0
 */
export type Facts = typeof S.Facts.Type

/**
 * The report: the one format of both authors, written as JSON and as the
 * Markdown's front matter and sections.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Report: typeof S.Report = S.Report

/**
 * @category models
 * @since 0.2.0
 */
export type Report = typeof S.Report.Type

/**
 * What an author is given: the workspace root (for the report's header; the
 * tools see the road's workspace) and the session to make every call in.
 *
 * @category models
 * @since 0.2.0
 */
export interface Job {
  readonly root: string
  readonly session: string
}

/**
 * Who writes a report: gathers facts through the road in context and
 * returns the report, attribution included. {@link deterministic} needs no
 * model; a model-driven author (the agent following {@link protocol}) plugs
 * in here.
 *
 * @category models
 * @since 0.2.0
 */
export type Author<E = never, R = never> = (job: Job) => Effect.Effect<Report, E, Invoke.Services | R>

/**
 * The protocol's steps, as guidance for a model-driven author: the facts to
 * look for, the tools that find them, the sections to write and the budget.
 *
 * @category constants
 * @since 0.2.0
 */
export const protocol = `Project Resurrection: a status report of a dormant project, at most 10 tool calls.
1. Discover the structure: world.tools.file.list of the root; the manifests there say the project type (package.json: node, Cargo.toml: rust, pyproject.toml: python, go.mod: go, …).
2. Read the manifest: name, dependencies, scripts (world.tools.file.read).
3. Analyse git: world.tools.git.status (branch, uncommitted work), world.tools.git.log with includeDiff and maxDiffSize 0 (recent commits, the areas and files they touched).
4. Read the DEVLOG's last 500 lines if there is one (world.tools.file.read with limit 0 for its size, then offset).
5. Look for TODO and FIXME comments (world.tools.search.grep) and date the important ones (world.tools.git.blame of their lines); look for tests and CI (world.tools.file.glob).
6. Write four sections: Last active area, Current state, Suggested next steps, Based on (the files read and the calls made). Say what you could not look at.`

/**
 * The deterministic author: the composed pipeline of ugent tools (at most 15
 * calls through the road, in three concurrent rounds) and fixed rules for
 * the prose. It never fails: a call that does not succeed (a folder that is
 * not a repository, a refusal by the recipe) becomes a fact that is
 * unavailable, with the tool's own reason.
 *
 * **Example** (A report of a folder that is not a repository)
 * ```ts
 * import { Report, Server } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "package.json"), JSON.stringify({ name: "demo", scripts: { test: "vitest" } }))
 * const report = await Effect.runPromise(
 *   Report.make({ root }).pipe(Effect.provide(Server.layer({ root, stores: "memory" })))
 * )
 * console.log(report.project, report.facts?.git.available, report.attribution.toolCalls.length)
 * // => demo false 6
 * console.log(report.currentState.summary)
 * // => `demo`: a node project, 1 file in 1 top-level entry. Git facts are unavailable: No git repository at .: there is no .git there.
 * console.log(report.nextSteps.points[0])
 * // => Add a first test: no test files were found
 * ```
 *
 * @category authors
 * @since 0.2.0
 */
export const deterministic: Author = (job) =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeMillis
    const gathered = yield* gatherer.gather(job.session)
    const now = yield* Clock.currentTimeMillis
    return compose.compose(gathered, {
      root: job.root,
      project: basename(job.root),
      session: job.session,
      generatedAt: DateTime.formatIso(DateTime.makeUnsafe(now)),
      nowMillis: now,
      durationMillis: now - started
    })
  })

/**
 * The model-driven author: the agent loop (`Agent.run`, with the
 * {@link LanguageModel.LanguageModel} in context) follows {@link protocol}
 * as guidance within its budgets (at most `maxCalls` tool calls, default 10;
 * a minute of wall time), each call through the road, then answers with the
 * four sections. A reply that is not in the format gets one chance to be
 * corrected; a run that ends without the sections (a budget spent, a reply
 * that stays malformed) is still a report, whose `incomplete` says what is
 * missing. The attribution is the run's own calls, with their road call ids.
 *
 * **Example** (A scripted model writes the report)
 * ```ts
 * import { Report, Server } from "@ugent/agentese"
 * import { Scripted } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "README.md"), "# demo\n")
 * const section = (summary: string) => ({ summary, points: [] })
 * const model = Scripted.layer((_request, index) =>
 *   index === 0
 *     ? Scripted.calls([{ name: "world_tools_file_read", params: { path: "README.md" } }])
 *     : Scripted.json({
 *         lastActiveArea: section("The README."),
 *         currentState: section("A title and nothing else."),
 *         nextSteps: section("Write the project."),
 *         basedOn: section("README.md.")
 *       })
 * )
 * const report = await Effect.runPromise(
 *   Report.make({ root, author: Report.withModel({ model: "scripted" }) }).pipe(
 *     Effect.provide(model),
 *     Effect.provide(Server.layer({ root, stores: "memory" }))
 *   )
 * )
 * console.log(report.mode, report.currentState.summary, report.attribution.filesRead.map((f) => f.path))
 * // => model A title and nothing else. [ 'README.md' ]
 * ```
 *
 * @category authors
 * @since 0.2.0
 */
export const withModel = (options: {
  /** The model's name, as the report records it (`anthropic:claude-sonnet-4-5`). */
  readonly model: string
  readonly maxCalls?: number | undefined
  readonly maxSteps?: number | undefined
  readonly timeout?: Duration.Input | undefined
  readonly onStep?: ((step: Agent.Step) => Effect.Effect<void>) | undefined
}): Author<AiError.AiError, Agent.Services> => modelAuthor.author({ ...options, protocol })

/**
 * Makes a report through the road in context: a new session, the author
 * (the {@link deterministic} one by default), and the whole duration.
 *
 * **Example** (Another author in the same format)
 * ```ts
 * import { Report, Server } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * // An author that keeps the facts and rewrites the next steps (a model's author returns the same format).
 * const cautious: Report.Author = (job) =>
 *   Effect.map(Report.deterministic(job), (report) => ({
 *     ...report,
 *     nextSteps: { summary: "Ask before acting.", points: ["Ask the maintainer where to start"] }
 *   }))
 * const report = await Effect.runPromise(
 *   Report.make({ root, author: cautious }).pipe(Effect.provide(Server.layer({ root, stores: "memory" })))
 * )
 * console.log(report.nextSteps.points, report.lastActiveArea.summary)
 * // => [ 'Ask the maintainer where to start' ] Nothing: the folder is empty.
 * ```
 *
 * @category running
 * @since 0.2.0
 */
export const make = <E = never, R = never>(options: {
  readonly root: string
  readonly author?: Author<E, R> | undefined
}): Effect.Effect<Report, E, Invoke.Services | R> =>
  Effect.gen(function* () {
    const started = yield* Clock.currentTimeNanos
    const author: Author<E, R> = options.author ?? deterministic
    const report = yield* author({ root: resolve(options.root), session: `report-${randomUUID()}` })
    const millis = Number((yield* Clock.currentTimeNanos) - started) / 1e6
    return { ...report, durationMillis: Math.round(millis) }
  })

/**
 * The report as Markdown: YAML front matter with the attribution (the same
 * fields as the JSON form; every value is JSON, which YAML reads as is),
 * then the sections.
 *
 * **Example** (The front matter lists every call with its id)
 * ```ts
 * import { Report, Server } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { mkdtempSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * const report = await Effect.runPromise(
 *   Report.make({ root }).pipe(Effect.provide(Server.layer({ root, stores: "memory" })))
 * )
 * const lines = Report.markdown(report).split("\n")
 * console.log(lines.filter((l) => l.startsWith("    - {\"callId\"")).map((l) => JSON.parse(l.slice(6)).path))
 * // => [ 'world.tools.file.list', 'world.tools.git.status' ]
 * console.log(lines.filter((l) => l.startsWith("## ")))
 * // => [ '## Last active area', '## Current state', '## Suggested next steps', '## Based on' ]
 * ```
 *
 * @category rendering
 * @since 0.2.0
 */
export const markdown: (report: Report) => string = md.markdown

/**
 * The Markdown without its front matter: what `ugent report` prints.
 *
 * @category rendering
 * @since 0.2.0
 */
export const body: (report: Report) => string = md.body

/**
 * The result budget of the report's own road, in estimated tokens: a
 * history of 100 commits with their files is larger than a model's default
 * budget of 25,000, and no model reads the deterministic pipeline's results.
 *
 * @category constants
 * @since 0.2.0
 */
export const budgetTokens = 250_000

/**
 * Where a report was saved: the Markdown and the JSON, each also copied to
 * `latest.md` / `latest.json` beside it.
 *
 * @category models
 * @since 0.2.0
 */
export interface Saved {
  readonly markdown: string
  readonly json: string
}

/**
 * Saves a report under `<root>/.ugent/reports/` (the workspace's state
 * folder, ignored by git): `<time>.md` and `<time>.json`, and `latest.md` /
 * `latest.json`.
 *
 * @category saving
 * @since 0.2.0
 */
export const save = (root: string, report: Report): Effect.Effect<Saved, State.StateError> =>
  Effect.flatMap(State.reports(root), (reports) =>
    Effect.try({
      try: () => {
        const stamp = report.generatedAt.replace(/[:.]/g, "-")
        const text = markdown(report)
        const json = `${JSON.stringify(report, null, 2)}\n`
        const saved = { markdown: join(reports, `${stamp}.md`), json: join(reports, `${stamp}.json`) }
        writeNoFollow(saved.markdown, text)
        writeNoFollow(saved.json, json)
        writeNoFollow(join(reports, "latest.md"), text)
        writeNoFollow(join(reports, "latest.json"), json)
        return saved
      },
      catch: (e) =>
        new State.StateError({
          path: reports,
          problem: `the report could not be saved (${e instanceof Error ? e.message : String(e)})`,
          fix: "Remove what is in the way (a link or a folder of that name), or use a root you can write."
        })
    })
  )

// A planted link in reports/ is refused by the kernel (O_NOFOLLOW), never followed.
const writeNoFollow = (file: string, text: string): void => {
  const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600)
  try {
    writeFileSync(fd, text)
  } finally {
    closeSync(fd)
  }
}

/**
 * The options of {@link run}: the root, the author, and the server the
 * report's calls take (stores, recipe, caller; its result budget defaults
 * to {@link budgetTokens}).
 *
 * @category models
 * @since 0.2.0
 */
export interface Options<E = never, R = never> {
  readonly root: string
  readonly author?: Author<E, R> | undefined
  readonly server?: Omit<Server.Options, "root"> | undefined
  /** Save the report under `.ugent/reports/` (default true). */
  readonly save?: boolean | undefined
}

/**
 * The report's own road could not start (a store that cannot open, a root
 * that is not a directory).
 *
 * @category errors
 * @since 0.2.0
 */
export class RoadUnavailable extends Schema.TaggedError<RoadUnavailable>()("RoadUnavailable", {
  root: Schema.String,
  problem: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `The report's road on ${this.root} could not start (${this.problem}): check that the root is a directory you can read, or keep the stores in memory (stores: "memory").`
  }
}

/**
 * Makes a report of a folder on a road of its own (the audit records go to
 * `<root>/.ugent/ugent.db` unless `server.stores` says otherwise), and saves
 * it. The caller is `report` at L0.
 *
 * **Example** (A report saved under .ugent/reports)
 * ```ts
 * import { Report } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { mkdtempSync, readdirSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "go.mod"), "module example.com/hello\n\ngo 1.22\n")
 * const { report, saved } = await Effect.runPromise(Report.run({ root }))
 * console.log(report.project, report.facts?.structure.projectTypes)
 * // => example.com/hello [ { type: 'go', file: 'go.mod' } ]
 * console.log(readdirSync(join(root, ".ugent", "reports")).filter((f) => f.startsWith("latest")))
 * // => [ 'latest.json', 'latest.md' ]
 * console.log(saved?.markdown.endsWith(".md"))
 * // => true
 * ```
 *
 * @category running
 * @since 0.2.0
 */
export const run = <E = never, R = never>(
  options: Options<E, R>
): Effect.Effect<
  { readonly report: Report; readonly saved: Saved | undefined },
  E | RoadUnavailable | State.StateError,
  R
> =>
  Effect.scoped(
    Effect.gen(function* () {
      const root = resolve(options.root)
      const road = yield* Layer.build(
        Server.layer({ observerId: "report", budgetTokens, ...options.server, root })
      ).pipe(Effect.mapError((e) => new RoadUnavailable({ root, problem: ToolError.messageOf(e) })))
      const report = yield* make({ root, author: options.author }).pipe(Effect.provideContext(road))
      const saved = options.save === false ? undefined : yield* save(root, report)
      return { report, saved }
    })
  )
