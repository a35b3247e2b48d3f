/**
 * Results for models: the text an MCP client hands its model, made from a
 * call's encoded result (ugent's JSON travels beside it, as
 * `structuredContent`, for programs). A read is the file's numbered lines
 * after a one-line header (the path, the lines shown of the total, where to
 * read on); listings, searches and git results are one entry per line
 * (matches grouped by file, diffs as unified diffs); any other result is an
 * indented outline under its family's one-sentence summary. A failure begins
 * with one plain line (`Forbidden: …`), then what to do next, then its
 * details. Every hint names a tool as the client lists it
 * (`world_tools_file_read`), and a session that remembers proofs is not shown
 * the proof tokens.
 *
 * @since 0.2.0
 */
import type { Family, ToolError } from "@ugent/core"
import * as Budget from "./Budget.ts"
import * as Catalog from "./Catalog.ts"

/**
 * Who reads a result: the client that carries it to a model, what that
 * client passes whole, and how it names tools.
 *
 * @category models
 * @since 0.2.0
 */
export interface Audience {
  /** The client's `clientInfo.name`, if it gave one. */
  readonly client: string | undefined
  /** What the client passes to its model whole (the budget, unless the recipe or host sets one). */
  readonly limit: Budget.Limit
  /** The name the client lists a path under. */
  readonly toolName: (path: string) => string
  /** A hint with every tool it names (a path, or a tool's own dotted name) spelled as the client lists it. */
  readonly rename: (text: string) => string
  /** Whether the session remembers the proofs it is shown (their tokens are then left out of the text). */
  readonly remembersProofs: boolean
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * The audience of a client: its budget from its name (see `Budget.forClient`),
 * and hints that name the given tools (their paths, and their own dotted
 * names such as `file.read`) as the client lists them.
 *
 * **Example** (Hints in the names an MCP client lists)
 * ```ts
 * import { Render } from "@ugent/agentese"
 * const audience = Render.audience({
 *   client: "claude-code",
 *   tools: [{ path: "world.tools.file.read", name: "file.read" }, { path: "self.memory.read", name: "memory.read" }]
 * })
 * console.log(audience.rename("Read it with file.read, or page it with self.memory.read."))
 * // => Read it with world_tools_file_read, or page it with self_memory_read.
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const audience = (options: {
  readonly client?: string | undefined
  readonly tools?: ReadonlyArray<{ readonly path: string; readonly name?: string | undefined }> | undefined
  readonly toolName?: ((path: string) => string) | undefined
  readonly remembersProofs?: boolean | undefined
  readonly limit?: Budget.Limit | undefined
}): Audience => {
  const toolName = options.toolName ?? Catalog.toolName
  const names = new Map<string, string>()
  for (const tool of options.tools ?? []) {
    const listed = toolName(tool.path)
    if (listed !== tool.path) names.set(tool.path, listed)
  }
  for (const tool of options.tools ?? []) {
    // A tool's own name is renamed only when dotted (`file.read`), never a plain word (`clarify`).
    const own = tool.name
    if (own !== undefined && own.includes(".") && !names.has(own) && own !== tool.path)
      names.set(own, toolName(tool.path))
  }
  const pattern =
    names.size === 0
      ? undefined
      : new RegExp(
          `(?<![\\w./-])(?:${[...names.keys()]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join("|")})(?![\\w-]|\\.\\w)`,
          "g"
        )
  return {
    client: options.client,
    limit: options.limit ?? Budget.forClient(options.client),
    toolName,
    rename: pattern === undefined ? (text) => text : (text) => text.replace(pattern, (m) => names.get(m) ?? m),
    remembersProofs: options.remembersProofs ?? true
  }
}

// ---------------------------------------------------------------------------
// Reading encoded results
// ---------------------------------------------------------------------------

type Json = Record<string, unknown>

const isRecord = Catalog.isRecord
const isInt = (u: unknown): u is number => typeof u === "number" && Number.isInteger(u)
const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)
const arr = (u: unknown): ReadonlyArray<unknown> | undefined => (Array.isArray(u) ? u : undefined)
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`
const proofToken = /^rp1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
const isProof = (u: unknown): boolean => typeof u === "string" && proofToken.test(u)

/** The proof token of a result, as a line, for an audience that does not remember proofs. */
const proofLine = (o: Json, a: Audience): string =>
  !a.remembersProofs && typeof o.proof === "string" ? `\nproof: ${o.proof}` : ""

/** A call of a path with arguments, as a hint in the client's names. */
const callHint = (a: Audience, path: string, args: Json) => `${a.toolName(path)} ${JSON.stringify(args)}`

const joined = (head: string, body: string) => (body === "" ? head : `${head}\n${body}`)

/** A diff the tool printed, without its closing newlines. */
const diffOf = (o: Json) => (str(o.diff) ?? "").replace(/\n+$/, "")

// ---------------------------------------------------------------------------
// Files
// ---------------------------------------------------------------------------

const readPath = "world.tools.file.read"

const fileRead = (o: Json, a: Audience): string | undefined => {
  const path = str(o.path)
  const content = str(o.content)
  const { startLine, endLine, totalLines, linesCut } = o
  if (path === undefined || content === undefined || !isInt(startLine) || !isInt(endLine) || !isInt(totalLines)) {
    return undefined
  }
  const parts =
    totalLines === 0
      ? [`${path}: empty file`]
      : endLine < startLine
        ? [`${path}: no lines shown of ${totalLines}`]
        : [`${path}: lines ${startLine}-${endLine} of ${totalLines}`]
  if (isInt(o.nextOffset)) parts.push(`more: ${callHint(a, readPath, { path, offset: o.nextOffset })}`)
  if (isInt(linesCut) && linesCut > 0) parts.push(`${plural(linesCut, "long line")} cut short`)
  const notice = str(o.notice)
  if (notice !== undefined && totalLines > 0) parts.push(a.rename(notice))
  return joined(parts.join("; "), content) + proofLine(o, a)
}

const fileWrite = (o: Json, a: Audience): string | undefined => {
  const path = str(o.path)
  if (path === undefined || !isInt(o.bytes)) return undefined
  return (
    joined(`${o.created === true ? "Created" : "Wrote"} ${path} (${plural(o.bytes, "byte")})`, diffOf(o)) +
    proofLine(o, a)
  )
}

const fileEdit = (o: Json, a: Audience): string | undefined => {
  const path = str(o.path)
  if (path === undefined || !isInt(o.replacements)) return undefined
  const head =
    o.dryRun === true
      ? `Dry run of an edit of ${path}: ${plural(o.replacements, "replacement")} (nothing written)`
      : `Edited ${path}: ${plural(o.replacements, "replacement")}`
  return joined(head, diffOf(o)) + proofLine(o, a)
}

const fileList = (o: Json): string | undefined => {
  const entries = arr(o.entries)
  const path = str(o.path)
  if (entries === undefined || path === undefined) return undefined
  const dir = path === "" ? "." : path
  const head = `${dir}: ${plural(entries.length, "entry", "entries")}${o.truncated === true && isInt(o.total) ? ` of ${o.total} shown` : ""}`
  const lines = entries.map((e) => {
    if (!isRecord(e)) return String(e)
    const kind = str(e.kind)
    const extra = [
      kind !== undefined && kind !== "file" && kind !== "directory" ? kind : undefined,
      e.link !== undefined ? `link ${String(e.link)}` : undefined,
      e.isDir !== true && typeof e.size === "number" ? plural(e.size, "byte") : undefined
    ].filter((x) => x !== undefined)
    return `${String(e.path ?? e.name)}${e.isDir === true ? "/" : ""}${extra.length > 0 ? `  (${extra.join(", ")})` : ""}`
  })
  return joined(head, lines.join("\n"))
}

/** A modification time to the second (`2026-05-01T12:00:00Z`), as a listing shows it. */
const toSecond = (iso: string) => iso.replace(/\.\d+Z$/, "Z")

const fileGlob = (o: Json): string | undefined => {
  const files = arr(o.files)
  if (files === undefined || !isInt(o.totalMatches)) return undefined
  const by = arr(o.truncatedBy) ?? []
  const parts = [`${plural(o.totalMatches, "file")} matched`]
  if (o.truncated === true && by.includes("limit"))
    parts.push(`${files.length} shown (narrow the pattern or raise limit)`)
  if (by.includes("maxDepth")) parts.push("deeper directories were not searched (raise maxDepth)")
  // Each path with its size and time, when the result has them.
  const entries = arr(o.entries)?.filter(isRecord)
  const lines =
    entries !== undefined && entries.length === files.length
      ? entries.map((e) =>
          isInt(e.size) && typeof e.modified === "string"
            ? `${String(e.path)}  (${plural(e.size, "byte")}, ${toSecond(e.modified)})`
            : String(e.path)
        )
      : files.map(String)
  return joined(parts.join("; "), lines.join("\n"))
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

const more = (o: Json) => (o.truncated === true ? "; more matched (narrow the search or raise maxMatches)" : "")

/**
 * One file's matches as ripgrep prints them with `--column`: `N:C:text` for a
 * match (line, column), `N-text` for context, `--` between groups.
 */
const matchLines = (matches: ReadonlyArray<unknown>): Array<string> => {
  const lines = new Map<number, { readonly text: string; match: boolean; column?: number }>()
  for (const m of matches) {
    if (!isRecord(m) || !isInt(m.line)) continue
    for (const c of [...(arr(m.before) ?? []), ...(arr(m.after) ?? [])]) {
      if (isRecord(c) && isInt(c.line) && !lines.has(c.line)) lines.set(c.line, { text: String(c.text), match: false })
    }
    lines.set(m.line, { text: String(m.text), match: true, ...(isInt(m.column) ? { column: m.column } : {}) })
  }
  const out: Array<string> = []
  let previous: number | undefined
  for (const n of [...lines.keys()].sort((x, y) => x - y)) {
    if (previous !== undefined && n > previous + 1) out.push("--")
    const line = lines.get(n)!
    out.push(`${n}${line.match ? `:${line.column === undefined ? "" : `${line.column}:`}` : "-"}${line.text}`)
    previous = n
  }
  return out
}

const grep = (o: Json): string | undefined => {
  const searched = isInt(o.filesSearched) ? ` (${plural(o.filesSearched, "file")} searched)` : ""
  switch (o.mode) {
    case "files": {
      const files = arr(o.files) ?? []
      return joined(`Matches in ${plural(files.length, "file")}${searched}${more(o)}`, files.map(String).join("\n"))
    }
    case "count": {
      const counts = (arr(o.counts) ?? []).filter(isRecord)
      return joined(
        `${plural(Number(o.totalMatches), "match", "matches")} in ${plural(counts.length, "file")}${more(o)}`,
        counts.map((c) => `${String(c.path)}: ${String(c.count)}`).join("\n")
      )
    }
    case "content": {
      const files = (arr(o.matches) ?? []).filter(isRecord)
      const blocks = files.map((f) => [String(f.path), ...matchLines(arr(f.matches) ?? [])].join("\n"))
      return joined(
        `${plural(Number(o.totalMatches), "match", "matches")} in ${plural(files.length, "file")}${more(o)}`,
        blocks.join("\n\n")
      )
    }
    default:
      return undefined
  }
}

// ---------------------------------------------------------------------------
// Git
// ---------------------------------------------------------------------------

/** A diff's files as a unified diff. */
const unified = (changes: Json): string => {
  const out: Array<string> = []
  for (const f of (arr(changes.files) ?? []).filter(isRecord)) {
    const path = String(f.path)
    const old = str(f.oldPath) ?? path
    out.push(`diff --git a/${old} b/${path}`)
    if (f.status === "added") out.push("new file")
    if (f.status === "deleted") out.push("deleted file")
    if (f.status === "renamed") out.push(`rename from ${old}`, `rename to ${path}`)
    if (f.oldMode !== undefined && f.newMode !== undefined && f.oldMode !== f.newMode) {
      out.push(`old mode ${String(f.oldMode)}`, `new mode ${String(f.newMode)}`)
    }
    if (f.redacted === true) {
      out.push("(the content of this file is withheld)")
      continue
    }
    if (f.binary === true) {
      out.push("Binary files differ")
      continue
    }
    const hunks = (arr(f.hunks) ?? []).filter(isRecord)
    if (hunks.length > 0) {
      out.push(f.status === "added" ? "--- /dev/null" : `--- a/${old}`)
      out.push(f.status === "deleted" ? "+++ /dev/null" : `+++ b/${path}`)
    }
    for (const h of hunks) {
      out.push(`@@ -${String(h.oldStart)},${String(h.oldLines)} +${String(h.newStart)},${String(h.newLines)} @@`)
      for (const l of (arr(h.lines) ?? []).filter(isRecord)) {
        out.push(`${l.type === "add" ? "+" : l.type === "delete" ? "-" : " "}${String(l.content)}`)
        if (l.noNewlineAtEnd === true) out.push("\\ No newline at end of file")
      }
    }
    if (f.truncated === true) out.push("… (this file's diff was cut at maxDiffSize)")
  }
  if (isInt(changes.omittedFiles) && changes.omittedFiles > 0) {
    out.push(`… ${plural(changes.omittedFiles, "more file")} not shown (maxFiles)`)
  }
  return out.join("\n")
}

const stats = (s: unknown): string =>
  isRecord(s)
    ? `${plural(Number(s.filesChanged), "file")} changed, +${String(s.additions)}/-${String(s.deletions)}`
    : ""

const gitDiff = (o: Json): string | undefined => {
  if (arr(o.files) === undefined) return undefined
  const range = `${o.base === null ? "(no commits)" : String(o.base ?? "HEAD")} → ${String(o.compare)}`
  return joined(`${stats(o.stats)} (${range})${o.truncated === true ? "; cut (see maxDiffSize)" : ""}`, unified(o))
}

const commitLine = (c: Json): string => {
  const s = isRecord(c.stats) ? `, +${String(c.stats.additions)}/-${String(c.stats.deletions)}` : ""
  return `${String(c.shortHash)} ${String(c.date)} ${String(c.author)}: ${String(c.subject)} (${plural(Number(c.filesChanged), "file")}${s})`
}

const gitLog = (o: Json): string | undefined => {
  const commits = arr(o.commits)
  if (commits === undefined) return undefined
  const head = `${plural(commits.length, "commit")}${o.truncated === true ? "; more matched (raise limit or narrow)" : ""}`
  const lines = commits.filter(isRecord).map((c) => {
    const diff = isRecord(c.diff) ? unified(c.diff) : ""
    return diff === "" ? commitLine(c) : `${commitLine(c)}\n${diff}\n`
  })
  return joined(head, lines.join("\n"))
}

const gitShow = (o: Json): string | undefined => {
  const c = o.commit
  if (!isRecord(c)) return undefined
  const parents = arr(c.parents) ?? []
  const lines = [
    `commit ${String(c.hash)}`,
    ...(parents.length > 1 ? [`Merge: ${parents.map((p) => String(p).slice(0, 7)).join(" ")}`] : []),
    `Author: ${String(c.author)} <${String(c.email)}>`,
    `Date:   ${String(c.date)}`,
    "",
    ...String(c.message)
      .replace(/\n+$/, "")
      .split("\n")
      .map((l) => `    ${l}`)
  ]
  const diff = isRecord(o.diff) ? unified(o.diff) : ""
  const summary = isRecord(o.diff) ? `\n\n${stats(o.diff.stats)}` : ""
  return `${lines.join("\n")}${summary}${diff === "" ? "" : `\n${diff}`}`
}

const change = (c: unknown): string => {
  if (!isRecord(c)) return `  ${String(c)}`
  return `  ${String(c.status).padEnd(10)}${c.oldPath !== undefined ? `${String(c.oldPath)} -> ` : ""}${String(c.path)}`
}

const gitStatus = (o: Json): string | undefined => {
  if (!("branch" in o) || arr(o.staged) === undefined) return undefined
  const at = str(o.head) === undefined ? "" : ` at ${String(o.head).slice(0, 7)}`
  const head = [
    o.branch === null ? `HEAD detached${at}` : `On branch ${String(o.branch)}${at}`,
    ...(o.noCommits === true ? ["no commits yet"] : []),
    ...(o.clean === true ? ["clean"] : []),
    ...(o.truncated === true ? ["some files not listed (raise limit)"] : [])
  ].join("; ")
  const section = (title: string, items: ReadonlyArray<unknown> | undefined, line: (u: unknown) => string) =>
    items === undefined || items.length === 0 ? [] : [`${title}:`, ...items.map(line)]
  return joined(
    head,
    [
      ...section("staged", arr(o.staged), change),
      ...section("unstaged", arr(o.unstaged), change),
      ...section("untracked", arr(o.untracked), (p) => `  ${String(p)}`),
      ...section("conflicted", arr(o.conflicted), (p) => `  ${String(p)}`)
    ].join("\n")
  )
}

const gitBlame = (o: Json, a: Audience): string | undefined => {
  const lines = arr(o.lines)
  const path = str(o.path)
  if (lines === undefined || path === undefined) return undefined
  const records = lines.filter(isRecord)
  const first = records[0]?.line
  const last = records.at(-1)?.line
  const parts = [
    records.length === 0
      ? `${path} at ${String(o.rev)}: no lines`
      : `${path} at ${String(o.rev)}: lines ${String(first)}-${String(last)}`
  ]
  if (o.truncated === true && isInt(o.nextLine)) {
    parts.push(`more: ${callHint(a, "world.tools.git.blame", { path, startLine: o.nextLine })}`)
  }
  return joined(
    parts.join("; "),
    records
      .map((l) => {
        const c = isRecord(l.commit) ? l.commit : undefined
        const who =
          c === undefined
            ? "(uncommitted)"
            : `${String(c.shortHash)} ${String(c.author)} ${String(c.date).slice(0, 10)}`
        return `${who} ${String(l.line)}\t${String(l.text)}`
      })
      .join("\n")
  )
}

// ---------------------------------------------------------------------------
// Web, shell, working memory
// ---------------------------------------------------------------------------

const webFetch = (o: Json, a: Audience): string | undefined => {
  const content = str(o.content)
  if (content === undefined || str(o.finalUrl) === undefined) return undefined
  if (isRecord(o.redirect)) {
    return `Redirected (HTTP ${String(o.redirect.status)}) to ${String(o.redirect.location)}: fetch it to follow.`
  }
  const start = Number(o.startIndex)
  const parts = [
    `${o.title === undefined ? "" : `${String(o.title)} — `}${String(o.finalUrl)} (HTTP ${String(o.status)}${o.contentType === "" ? "" : `, ${String(o.contentType)}`}): characters ${start}-${start + content.length} of ${String(o.totalLength)}`
  ]
  if (isInt(o.nextIndex)) {
    parts.push(`more: ${callHint(a, "world.tools.web.fetch", { url: String(o.url), startIndex: o.nextIndex })}`)
  }
  if (o.bodyTruncated === true) parts.push("the page was longer than the byte limit and only its beginning was read")
  return joined(parts.join("; "), content)
}

const webSearch = (o: Json): string | undefined => {
  const results = arr(o.results)
  if (results === undefined) return undefined
  const head = `${plural(results.length, "result")} for ${JSON.stringify(String(o.query))} (${String(o.provider)})${o.notice === undefined ? "" : `; ${String(o.notice)}`}`
  return joined(
    head,
    results
      .filter(isRecord)
      .map((r, i) => `${i + 1}. ${String(r.title)}\n   ${String(r.url)}\n   ${String(r.snippet)}`)
      .join("\n")
  )
}

const shell = (o: Json): string | undefined => {
  if (str(o.id) === undefined || str(o.stdout) === undefined || str(o.stderr) === undefined) return undefined
  const status =
    o.status === "exited" ? `exited with ${String(o.exitCode)}` : o.status === "running" ? "running" : String(o.status)
  const notes = [
    o.timedOut === true ? "timed out" : undefined,
    o.truncated === true ? "output cut (narrow the command: | head, | tail, grep)" : undefined
  ].filter((n) => n !== undefined)
  const head = `${String(o.id)} ${status} after ${String(o.durationMillis)} ms${notes.length > 0 ? `; ${notes.join("; ")}` : ""}`
  const sections = [
    String(o.stdout) === "" ? undefined : `--- stdout\n${String(o.stdout).replace(/\n$/, "")}`,
    String(o.stderr) === "" ? undefined : `--- stderr\n${String(o.stderr).replace(/\n$/, "")}`
  ].filter((s) => s !== undefined)
  return joined(head, sections.join("\n"))
}

/** The hint to the next page, asking for as many lines as this page has (the tool's own hint asks for its default). */
const nextPage = (o: Json, a: Audience): string => {
  if (o.hasMore !== true || typeof o.next !== "string") return ""
  let next = o.next
  const m = /^(\S+) (\{.*\})$/.exec(next)
  if (m !== null && o.unit === "lines" && isInt(o.start) && isInt(o.end)) {
    try {
      const args = JSON.parse(m[2]!) as Json
      if (args.lines === undefined)
        next = `${m[1]} ${JSON.stringify({ ...args, lines: Math.max(1, o.end - o.start + 1) })}`
    } catch {
      // Not a call's hint: it is shown as it is.
    }
  }
  return `; more: ${a.rename(next)}`
}

const memoryRead = (o: Json, a: Audience): string | undefined => {
  const content = str(o.content)
  if (content === undefined || str(o.id) === undefined || !isInt(o.start) || !isInt(o.end) || !isInt(o.total)) {
    return undefined
  }
  const span =
    o.unit === "lines" ? `lines ${o.start}-${o.end} of ${o.total}` : `characters ${o.start}-${o.end} of ${o.total}`
  return joined(`${String(o.id)}: ${span}${nextPage(o, a)}`, content)
}

const memoryList = (o: Json): string | undefined => {
  const entries = arr(o.entries)
  if (entries === undefined) return undefined
  return joined(
    `${plural(entries.length, "entry", "entries")} in working memory${o.hasMore === true ? " (more: raise limit)" : ""}`,
    entries
      .filter(isRecord)
      .map((e) => `${String(e.id)}  ${String(e.tool)}  ${plural(Number(e.lines), "line")}: ${String(e.summary)}`)
      .join("\n")
  )
}

const renderers: Readonly<Record<string, (o: Json, a: Audience) => string | undefined>> = {
  "world.tools.file.read": fileRead,
  "world.tools.file.write": fileWrite,
  "world.tools.file.edit": fileEdit,
  "world.tools.file.list": fileList,
  "world.tools.file.glob": fileGlob,
  "world.tools.search.grep": grep,
  "world.tools.git.status": gitStatus,
  "world.tools.git.log": gitLog,
  "world.tools.git.diff": gitDiff,
  "world.tools.git.blame": gitBlame,
  "world.tools.git.show": gitShow,
  "world.tools.web.fetch": webFetch,
  "world.tools.web.search": webSearch,
  "world.tools.system.bash": shell,
  "world.tools.system.output": shell,
  "world.tools.system.kill": shell,
  [Budget.memoryRead]: memoryRead,
  "self.memory.list": memoryList
}

// ---------------------------------------------------------------------------
// Any other result: an outline
// ---------------------------------------------------------------------------

const hintKeys = new Set(["next", "hint", "notice", "summary"])

const scalar = (v: unknown): string => {
  if (typeof v !== "string") return v === undefined ? "null" : JSON.stringify(v)
  return v === "" || /^\s|\s$/.test(v) ? JSON.stringify(v) : v
}

const isScalarLine = (v: unknown) => typeof v !== "object" || v === null || (Array.isArray(v) && v.length === 0)

/** A value as indented `key: value` lines, lists as `- item`, multi-line text as a block under `|`. */
const outlineLines = (value: unknown, indent: string, a: Audience): Array<string> => {
  const entries: Array<readonly [string | undefined, unknown]> = Array.isArray(value)
    ? value.map((v) => [undefined, v] as const)
    : isRecord(value)
      ? Object.entries(value).filter(([, v]) => !(a.remembersProofs && isProof(v)))
      : [[undefined, value]]
  const out: Array<string> = []
  for (const [key, raw] of entries) {
    const v = key !== undefined && hintKeys.has(key) && typeof raw === "string" ? a.rename(raw) : raw
    const lead = key === undefined ? `${indent}- ` : `${indent}${key}: `
    if (typeof v === "string" && v.includes("\n")) {
      out.push(
        `${lead}|`,
        ...v
          .replace(/\n$/, "")
          .split("\n")
          .map((l) => `${indent}  ${l}`)
      )
    } else if (isScalarLine(v)) {
      out.push(`${lead}${Array.isArray(v) ? "[]" : scalar(v)}`)
    } else if (isRecord(v) && Object.keys(v).length === 0) {
      out.push(`${lead}{}`)
    } else if (key === undefined) {
      // A list item that is an object or a list: its first line after the dash, the rest under it.
      const inner = outlineLines(v, `${indent}  `, a)
      out.push(`${indent}- ${inner[0]!.slice(indent.length + 2)}`, ...inner.slice(1))
    } else {
      out.push(`${indent}${key}:`, ...outlineLines(v, `${indent}  `, a))
    }
  }
  return out
}

/**
 * Any value as an outline a model reads easily: `key: value` lines, lists
 * as `- item`, multi-line text as an indented block. Proof tokens are left
 * out for an audience that remembers them.
 *
 * **Example** (A task list)
 * ```ts
 * import { Render } from "@ugent/agentese"
 * console.log(Render.outline({ tasks: [{ id: "t1", title: "Write tests", status: "done" }] }, Render.audience({})).split("\n"))
 * // => [ 'tasks:', '  - id: t1', '    title: Write tests', '    status: done' ]
 * ```
 *
 * @category rendering
 * @since 0.2.0
 */
export const outline = (value: unknown, a: Audience): string => {
  if (typeof value === "string") return value
  if (isScalarLine(value)) return Array.isArray(value) ? "(none)" : scalar(value)
  if (isRecord(value) && Object.keys(value).length === 0) return "(empty)"
  return outlineLines(value, "", a).join("\n")
}

/**
 * Whether a path's results have a rendering of their own (else they are an
 * outline under their family's summary, which a caller then passes).
 *
 * @category rendering
 * @since 0.2.0
 */
export const rendersItself = (path: string): boolean => renderers[path] !== undefined

/**
 * A successful result as the text a model reads: the path's own rendering
 * (reads, listings, searches, git, web, shell, working memory), else the
 * family's one-sentence summary above an outline of the result.
 *
 * **Example** (A read of a two-line README)
 * ```ts
 * import { Render } from "@ugent/agentese"
 * const read = { path: "README.md", content: "1\t# demo\n2\tHello.", startLine: 1, endLine: 2, totalLines: 2, truncated: false, nextOffset: null, linesCut: 0, metadata: {}, proof: "rp1.abc.def" }
 * console.log(Render.result("world.tools.file.read", read, Render.audience({})).split("\n"))
 * // => [ 'README.md: lines 1-2 of 2', '1\t# demo', '2\tHello.' ]
 * ```
 *
 * @category rendering
 * @since 0.2.0
 */
export const result = (
  path: string,
  encoded: unknown,
  a: Audience,
  present?: Family.Presentation | undefined
): string => {
  if (isRecord(encoded) && encoded.overBudget === true && typeof encoded.memoryId === "string") {
    return overBudget(encoded as Budget.OverBudget, a)
  }
  const own = renderers[path]
  if (own !== undefined && isRecord(encoded)) {
    try {
      const text = own(encoded, a)
      if (text !== undefined) return text
    } catch {
      // A result not shaped as its path's: the outline below shows it.
    }
  }
  const body = outline(encoded, a)
  return present === undefined ? body : joined(a.rename(present.summary), body)
}

/**
 * What a model reads in place of a result over its budget: what the result
 * was, where it is kept and how to read on (hints in the client's names).
 *
 * @category rendering
 * @since 0.2.0
 */
export const overBudget = (o: Budget.OverBudget, a: Audience): string => {
  const n = (v: number) => v.toLocaleString("en-US")
  const next = a.rename(o.next)
  return [
    `${a.rename(o.summary)}.`,
    `It is about ${n(o.estimatedTokens)} tokens, over the budget of one answer (about ${n(o.budgetTokens)} tokens), so it is kept in working memory as ${o.memoryId} (${n(o.chars)} characters, ${n(o.lines)} lines).`,
    next.charAt(0).toUpperCase() + next.slice(1)
  ].join("\n")
}

/** The first sentence of a message and the rest. */
const firstSentence = (s: string): readonly [string, string] => {
  const m = /^(.*?[.!?])\s+(?=[A-Z`"(])/.exec(s)
  return m === null ? [s, ""] : [m[1]!, s.slice(m[0].length)]
}

/**
 * A failure as the text a model reads: one plain line (its tag and the
 * message's first sentence), then the rest of the message (what to do
 * next), then, as JSON, the fields the message does not already say.
 *
 * **Example** (A refusal)
 * ```ts
 * import { Render } from "@ugent/agentese"
 * const error = { _tag: "NotFound", message: "File not found: DEVLOG.md. Find files with file.glob.", path: "DEVLOG.md", similar: ["DEVLOG.txt"] }
 * console.log(Render.failure(error, Render.audience({ tools: [{ path: "world.tools.file.glob", name: "file.glob" }] })).split("\n"))
 * // => [ 'NotFound: File not found: DEVLOG.md.', 'Find files with world_tools_file_glob.', 'Details: {"similar":["DEVLOG.txt"]}' ]
 * ```
 *
 * @category rendering
 * @since 0.2.0
 */
export const failure = (error: ToolError.FailureJson, a: Audience): string => {
  const message = error.message.replace(/\s*\n\s*/g, " ").trim()
  const [first, rest] = firstSentence(a.rename(message))
  const said = (v: unknown) => typeof v === "string" && v.length >= 3 && message.includes(v)
  const details = Object.fromEntries(
    Object.entries(error).filter(
      ([k, v]) => k !== "_tag" && k !== "message" && !said(v) && !(a.remembersProofs && isProof(v))
    )
  )
  const lines = [`${error._tag}: ${first}`]
  if (rest !== "") lines.push(rest)
  if (Object.keys(details).length > 0) lines.push(`Details: ${JSON.stringify(details)}`)
  return lines.join("\n")
}
