/**
 * The deterministic author's prose: the four sections of the report written
 * from the gathered facts by fixed rules, so the same repository gives the
 * same report. Every sentence is a fact the gatherer found or a step that
 * follows from one; nothing is guessed.
 *
 * @internal
 */
import type { Gathered } from "./gather.ts"
import * as Manifest from "./manifest.ts"
import * as S from "./schema.ts"

type Facts = typeof S.Facts.Type
type Section = typeof S.Section.Type
type Report = typeof S.Report.Type
type Git = Extract<Facts["git"], { available: true }>

/** When something happened, in words. */
export const ago = (days: number | null): string => {
  if (days === null) return "at an unknown time"
  if (days <= 0) return "today"
  if (days === 1) return "yesterday"
  if (days < 14) return `${days} days ago`
  if (days < 60) return `${Math.round(days / 7)} weeks ago`
  if (days < 730) return `${Math.round(days / 30)} months ago`
  return `${Math.round(days / 365)} years ago`
}

const daysSince = (date: string, nowMillis: number): number | null => {
  const at = Date.parse(date)
  return Number.isNaN(at) ? null : Math.max(0, Math.floor((nowMillis - at) / 86_400_000))
}

const day = (date: string) => date.slice(0, 10)
const code = (s: string) => `\`${s.replaceAll("`", "'")}\``
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`
const list = (items: ReadonlyArray<string>, max: number) =>
  items.length <= max ? items.join(", ") : `${items.slice(0, max).join(", ")} and ${items.length - max} more`
const quote = (s: string, max = 120) => `“${s.length > max ? `${s.slice(0, max - 1)}…` : s}”`

/** The first sentence of a tool's message: enough for a summary (the facts keep all of it). */
const firstSentence = (s: string) => /^(.*?[.!?])(?=\s|$)/.exec(s)?.[1] ?? s

const typeNames = (facts: Facts) => {
  const types = [...new Set(facts.structure.projectTypes.map((t) => t.type))]
  return types.length === 0 ? undefined : types.join(" + ")
}

const lastActiveArea = (facts: Facts, nowMillis: number): Section => {
  const { git, structure, devlog } = facts
  if (structure.empty) return { summary: "Nothing: the folder is empty.", points: [] }
  const points: Array<string> = []
  let summary: string
  if (git.available && git.commits.length > 0) {
    const last = git.commits[0]!
    const work = git.commits.filter((c) => !c.merge)
    const top = git.areas.slice(0, 3)
    const when = `${day(work.at(-1)?.date ?? last.date)} to ${day(last.date)}`
    summary =
      top.length === 0
        ? `The last commit was ${ago(daysSince(last.date, nowMillis))} (${day(last.date)}): ${quote(last.subject)}.`
        : `Recent work (${plural(work.length, "commit")}, ${when}) was mostly in ${top.map((a) => code(a.area)).join(", ")}; the last commit was ${ago(daysSince(last.date, nowMillis))}: ${quote(last.subject)}.`
    for (const a of top) {
      points.push(
        `${code(a.area)}: ${plural(a.commits, "commit")} of ${work.length}, ${plural(a.files, "file")} changed, last on ${day(a.lastDate)}`
      )
    }
    if (git.mostChanged.length > 0) {
      points.push(
        `Most-changed files: ${git.mostChanged
          .slice(0, 5)
          .map((f) => `${code(f.path)} (${plural(f.commits, "commit")}, +${f.additions}/−${f.deletions})`)
          .join(", ")}`
      )
    }
    for (const c of git.commits.slice(0, 5)) {
      const areas = c.areas.length > 0 ? ` [${list(c.areas, 3)}]` : ""
      points.push(`${code(c.shortHash)} ${day(c.date)} ${c.author}: ${quote(c.subject, 90)}${areas}`)
    }
  } else if (structure.recentlyModified.length > 0) {
    const areas = [...new Set(structure.recentlyModified.map((p) => (p.includes("/") ? p.split("/")[0]! : "(root)")))]
    summary = `No commit history to go by; the most recently modified files are in ${list(areas.map(code), 3)}.`
    points.push(`Most recently modified: ${list(structure.recentlyModified.map(code), 6)}`)
  } else {
    summary = "No commit history and no files to date the work by."
  }
  if (devlog !== null && devlog.lastLines.length > 0) {
    const heading = devlog.headings.at(-1)
    points.push(
      `The DEVLOG (${code(devlog.path)}, ${plural(devlog.totalLines, "line")}) ends ${heading !== undefined ? `under ${quote(heading.replace(/^#+\s*/, ""))} ` : ""}with: ${quote(devlog.lastLines.at(-1)!)}`
    )
  }
  return { summary, points }
}

const currentState = (facts: Facts, nowMillis: number): Section => {
  const { git, structure, manifest, checks, todos } = facts
  if (structure.empty) {
    return {
      summary: "The folder is empty: no files, no manifest, and no git repository.",
      points: git.available ? [] : [`Git: ${git.reason}`]
    }
  }
  const points: Array<string> = []
  const kind = typeNames(facts)
  const name = manifest?.name ?? undefined
  const size =
    structure.files === null
      ? `${plural(structure.entries.length, "top-level entry", "top-level entries")}`
      : `${plural(structure.files, "file")} in ${plural(structure.entries.length, "top-level entry", "top-level entries")}`
  const summaryParts = [
    `${name !== undefined ? `${code(name)}${manifest?.version ? ` ${manifest.version}` : ""}: ` : ""}${kind !== undefined ? `a ${kind} project` : "a folder with no recognised manifest"}, ${size}.`
  ]
  if (git.available) {
    const where = git.detached
      ? `a detached HEAD at ${code(git.head?.slice(0, 7) ?? "?")}`
      : `branch ${code(git.branch ?? "?")}`
    const dirty = git.staged + git.unstaged + git.untracked + git.conflicted
    summaryParts.push(
      git.noCommits
        ? `A git repository with no commits yet (${where}).`
        : dirty === 0
          ? `On ${where}, working tree clean.`
          : `On ${where}, with ${plural(dirty, "uncommitted change")}.`
    )
    if (!git.noCommits && git.commits.length > 0) {
      const days = daysSince(git.commits[0]!.date, nowMillis)
      if (days !== null && days >= 30) summaryParts.push(`Dormant: the last commit was ${ago(days)}.`)
    }
  } else {
    summaryParts.push(`Git facts are unavailable: ${firstSentence(git.reason)}`)
  }

  if (manifest !== null) {
    const deps = manifest.dependencies
    const dev = manifest.devDependencies
    points.push(
      `Manifest ${code(manifest.path)}: ${plural(deps.length, "dependency", "dependencies")}${deps.length > 0 ? ` (${list(deps, 6)})` : ""}, ${plural(dev.length, "dev dependency", "dev dependencies")}${dev.length > 0 ? ` (${list(dev, 6)})` : ""}`
    )
    if (manifest.scripts.length > 0)
      points.push(
        `Scripts: ${list(
          manifest.scripts.map((s) => code(s.name)),
          10
        )}`
      )
    if (manifest.workspaces.length > 0) points.push(`Workspaces: ${list(manifest.workspaces.map(code), 8)}`)
    if (manifest.description !== null) points.push(`Described as ${quote(manifest.description)}`)
  } else if (structure.projectTypes.length > 0) {
    points.push(
      `Manifests: ${list(
        structure.projectTypes.map((t) => `${code(t.file)} (${t.type})`),
        6
      )}`
    )
  }
  if (structure.projectTypes.length > 1 && manifest !== null) {
    points.push(
      `Also: ${list(
        structure.projectTypes.slice(1).map((t) => `${code(t.file)} (${t.type})`),
        6
      )}`
    )
  }
  const dirs = structure.entries.filter((e) => e.isDir).map((e) => `${e.name}/`)
  if (dirs.length > 0) points.push(`Top-level directories: ${list(dirs.map(code), 12)}`)

  if (git.available) {
    if (git.conflicted > 0) points.push(`${plural(git.conflicted, "conflicted file")}: resolve before anything else`)
    const counts = [
      git.staged > 0 ? `${git.staged} staged` : "",
      git.unstaged > 0 ? `${git.unstaged} modified` : "",
      git.untracked > 0 ? `${git.untracked} untracked` : ""
    ].filter((s) => s !== "")
    if (counts.length > 0) {
      points.push(`Uncommitted: ${counts.join(", ")} (${list(git.changedPaths.map(code), 6)})`)
    }
    if (git.historyNote !== undefined) points.push(`History: ${git.historyNote}`)
  }

  if (checks.searched) {
    points.push(
      checks.testFiles > 0
        ? `Tests: ${checks.truncated ? "at least " : ""}${plural(checks.testFiles, "test file")} (${list(checks.testDirs.map(code), 4)})`
        : "Tests: no test files found"
    )
    points.push(
      checks.ciFiles.length > 0
        ? `CI: ${checks.ciSystems.join(", ")} (${list(checks.ciFiles.map(code), 4)})`
        : "CI: no configuration found"
    )
  }
  if (todos.searched) {
    if (todos.found === 0) points.push("TODO/FIXME: none found in comments")
    else {
      const dated = todos.items.filter((t) => t.ageDays !== null).sort((a, b) => b.ageDays! - a.ageDays!)
      const oldest = dated[0]
      points.push(
        `TODO/FIXME: ${todos.truncated ? "at least " : ""}${todos.found} in ${plural(new Set(todos.items.map((t) => t.path)).size, "file")}${
          oldest !== undefined
            ? `; the oldest dated one is ${code(`${oldest.path}:${oldest.line}`)}, from ${ago(oldest.ageDays)} (${oldest.commit!.author})`
            : ""
        }`
      )
    }
  }
  for (const u of facts.unavailable) points.push(`Not available: ${u}`)
  return { summary: summaryParts.join(" "), points }
}

const nextSteps = (facts: Facts, nowMillis: number): Section => {
  const { git, structure, manifest, checks, todos, devlog } = facts
  if (structure.empty) {
    return {
      summary: "There is nothing to resume: start the project, or point the report at another folder.",
      points: ["Create the project's first files, then `git init` to keep its history"]
    }
  }
  const steps: Array<string> = []
  const primary = structure.projectTypes[0]?.type
  const g: Git | undefined = git.available ? git : undefined
  if (g !== undefined && g.conflicted > 0) {
    steps.push(`Resolve the merge conflicts in ${list(g.changedPaths.slice(0, g.conflicted).map(code), 4)}`)
  }
  if (g !== undefined && g.staged + g.unstaged + g.untracked > 0) {
    steps.push(
      `Review the uncommitted work on ${g.detached ? "the detached HEAD" : code(g.branch ?? "?")} (${list(g.changedPaths.map(code), 4)}): commit it, or stash it before starting something new`
    )
  }
  const open = devlog?.openItems.at(-1)
  if (open !== undefined)
    steps.push(`Pick up where the DEVLOG leaves off: ${quote(open.replace(/^[-*]\s*(\[ \]\s*)?/, ""))}`)
  const lastDays = g !== undefined && g.commits.length > 0 ? daysSince(g.commits[0]!.date, nowMillis) : null
  const install = Manifest.installCommand(primary)
  if (lastDays !== null && lastDays >= 90 && install !== undefined && manifest !== null) {
    steps.push(`Check the dependencies still install (${code(install)}): the last commit was ${ago(lastDays)}`)
  }
  const test = Manifest.testCommand(primary, manifest ?? undefined)
  if (checks.searched && checks.testFiles > 0) {
    steps.push(
      test !== undefined
        ? `Run the tests (${code(test)}) to see what still passes before changing anything`
        : `Run the tests (${list(checks.testDirs.map(code), 3)}) to see what still passes before changing anything`
    )
  } else if (checks.searched) {
    const where = g?.areas[0]?.area
    steps.push(
      `Add a first test${where !== undefined ? ` around ${code(where)}, where the work was` : ""}: no test files were found`
    )
  }
  if (g !== undefined && g.mostChanged.length > 0) {
    steps.push(
      `Re-read the most-changed files before editing them: ${list(
        g.mostChanged.slice(0, 3).map((f) => code(f.path)),
        3
      )}`
    )
  } else if (g === undefined && structure.recentlyModified.length > 0) {
    steps.push(`Re-read the most recently modified files: ${list(structure.recentlyModified.slice(0, 3).map(code), 3)}`)
  }
  const oldest = todos.items
    .filter((t) => t.ageDays !== null)
    .sort((a, b) => b.ageDays! - a.ageDays!)
    .slice(0, 3)
  if (oldest.length > 0) {
    steps.push(
      `Triage the oldest TODO/FIXME markers: ${oldest.map((t) => `${code(`${t.path}:${t.line}`)} (${ago(t.ageDays)})`).join(", ")}`
    )
  } else if (todos.found > 0) {
    steps.push(
      `Triage the TODO/FIXME markers, starting with ${code(`${todos.items[0]!.path}:${todos.items[0]!.line}`)}`
    )
  }
  if (checks.searched && checks.ciFiles.length === 0 && checks.testFiles > 0) {
    steps.push("Add CI that runs the tests on every push: no CI configuration was found")
  }
  if (!git.available && git.noRepository) {
    steps.push("Put the folder under version control (`git init`) so the next report can read its history")
  } else if (!git.available) {
    steps.push(`Make the history readable to the report: ${firstSentence(git.reason)}`)
  } else if (git.noCommits) steps.push("Make the first commit: the repository has none yet")
  const summary =
    steps.length === 0
      ? "Nothing stands out: the tree is clean, and there are no open markers."
      : `${plural(steps.length, "step")}, most urgent first.`
  return { summary, points: steps }
}

const linesRead = (lines: { readonly from: number; readonly to: number } | undefined) =>
  lines === undefined ? "" : lines.from === lines.to ? ` (line ${lines.from})` : ` (lines ${lines.from}–${lines.to})`

const basedOn = (gathered: Gathered, session: string): Section => {
  const calls = gathered.toolCalls
  const failed = calls.filter((c) => !c.ok)
  const reads = gathered.filesRead.map(
    (f) => `${code(f.path)}${linesRead(f.lines)} via ${f.via.replace(/^world\.tools\./, "")}`
  )
  const summary = `${plural(calls.length, "tool call")} through the road in session ${code(session)}${failed.length > 0 ? `, ${failed.length} of them without a result` : ""}; ${plural(gathered.filesRead.length, "file")} read.`
  return {
    summary,
    points: [
      ...(reads.length > 0 ? [`Files read: ${reads.join(", ")}`] : []),
      ...calls.map(
        (c) =>
          `${code(c.path)} ${c.input} → ${c.ok ? "ok" : `${c.error!.tag}`} (${c.purpose}; call ${code(c.callId)}, ${c.durationMillis} ms)`
      )
    ]
  }
}

/**
 * What the project is and how to start it, from its manifest: its
 * description (else its kind), then the commands that install, start and
 * test it.
 */
export const about = (facts: Facts): string | undefined => {
  const manifest = facts.manifest
  const primary = facts.structure.projectTypes[0]?.type ?? manifest?.type
  if (manifest === null && primary === undefined) return undefined
  const name = manifest?.name ?? "The project"
  const what =
    manifest?.description !== null && manifest?.description !== undefined
      ? `${name}: ${manifest.description.replace(/\.\s*$/, "")}.`
      : `${name} is a ${primary} project.`
  const install = Manifest.installCommand(primary)
  const start = primary === "node" && manifest?.scripts.some((s) => s.name === "start") ? "npm start" : undefined
  const test = Manifest.testCommand(primary, manifest ?? undefined)
  const steps = [install, start].filter((c): c is string => c !== undefined).map(code)
  const how = [
    ...(steps.length > 0 ? [`To start: ${steps.join(", then ")}`] : []),
    ...(test !== undefined ? [`the tests: ${code(test)}`] : [])
  ]
  return how.length === 0 ? what : `${what} ${how.join("; ")}.`
}

/** The report of gathered facts, written by the deterministic rules. */
export const compose = (
  gathered: Gathered,
  meta: {
    readonly root: string
    readonly project: string
    readonly session: string
    readonly generatedAt: string
    readonly nowMillis: number
    readonly durationMillis: number
  }
): Report => ({
  protocol: "project-resurrection",
  version: 1,
  project: gathered.facts.manifest?.name ?? meta.project,
  root: meta.root,
  generatedAt: meta.generatedAt,
  mode: "deterministic",
  durationMillis: meta.durationMillis,
  ...(about(gathered.facts) !== undefined ? { about: about(gathered.facts)! } : {}),
  lastActiveArea: lastActiveArea(gathered.facts, meta.nowMillis),
  currentState: currentState(gathered.facts, meta.nowMillis),
  nextSteps: nextSteps(gathered.facts, meta.nowMillis),
  basedOn: basedOn(gathered, meta.session),
  attribution: S.tallied({ session: meta.session, filesRead: gathered.filesRead, toolCalls: gathered.toolCalls }),
  facts: gathered.facts
})
