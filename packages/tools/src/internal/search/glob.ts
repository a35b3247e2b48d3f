/**
 * Glob and ignore-file matching with ripgrep's semantics, so the TypeScript
 * walk keeps and skips exactly the files ripgrep does. A glob is compiled
 * to a regular expression the way ripgrep's `globset` does with
 * `literal_separator`: `*` and `?` never cross `/`, `**` is recursive only
 * as a whole path component, `{a,b}` alternates, `[…]` classes, `\` escapes.
 * An ignore file is read the way ripgrep's `ignore` crate reads it (one
 * matcher per directory; the last matching line wins; `!` re-includes; a
 * trailing `/` matches directories only; a pattern without `/` matches at
 * any depth). The `ignore` package is not used because it also tests the
 * parent directories of a path, which ripgrep never does for an entry it
 * reached by walking.
 *
 * @internal
 */

/** A glob that cannot be compiled, with ripgrep's wording of the problem. */
export class GlobSyntax extends Error {}

const escapeRegex = (c: string): string => c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")

/** Compiles one glob (gitignore flavour already applied) to an anchored regex source. */
const globSource = (glob: string): string => {
  let out = ""
  let i = 0
  let inAlternates = false
  const components = glob.split("/")
  // `**` is recursive only as a whole component; elsewhere ripgrep refuses it.
  for (const component of components) {
    if (component.includes("**") && component !== "**") {
      throw new GlobSyntax("invalid use of **; must be one path component")
    }
  }
  while (i < glob.length) {
    const c = glob[i]!
    if (c === "\\") {
      const next = glob[i + 1]
      if (next === undefined) throw new GlobSyntax("dangling '\\'")
      out += escapeRegex(next)
      i += 2
      continue
    }
    if (c === "*" && glob[i + 1] === "*") {
      const atStart = i === 0 || glob[i - 1] === "/"
      const atEnd = i + 2 === glob.length
      if (atStart && atEnd) {
        out += ".*"
        i += 2
      } else if (atStart && glob[i + 2] === "/") {
        // `**/`: any number of leading components, including none.
        out += "(?:.*/)?"
        i += 3
      } else if (atEnd) {
        // `/**` at the end (the slash is already emitted): everything below.
        out += ".*"
        i += 2
      } else {
        out += "[^/]*"
        i += 2
      }
      continue
    }
    if (c === "*") {
      out += "[^/]*"
      i++
      continue
    }
    if (c === "?") {
      out += "[^/]"
      i++
      continue
    }
    if (c === "[") {
      let j = i + 1
      let negated = false
      if (glob[j] === "!" || glob[j] === "^") {
        negated = true
        j++
      }
      let body = ""
      let first = true
      while (j < glob.length && (glob[j] !== "]" || first)) {
        first = false
        const ch = glob[j]!
        if (ch === "\\" && j + 1 < glob.length) {
          body += escapeRegex(glob[j + 1]!)
          j += 2
          continue
        }
        body += ch === "-" ? "-" : escapeRegex(ch)
        j++
      }
      if (glob[j] !== "]") throw new GlobSyntax("unclosed character class; missing ']'")
      out += `[${negated ? "^" : ""}${body}]`
      i = j + 1
      continue
    }
    if (c === "{") {
      if (inAlternates) throw new GlobSyntax("nested alternate groups are not allowed")
      inAlternates = true
      out += "(?:"
      i++
      continue
    }
    if (c === "}" && inAlternates) {
      inAlternates = false
      out += ")"
      i++
      continue
    }
    if (c === "," && inAlternates) {
      out += "|"
      i++
      continue
    }
    out += escapeRegex(c)
    i++
  }
  if (inAlternates) throw new GlobSyntax("unclosed alternate group; missing '}'")
  return out
}

/** Compiles a glob to a regex matching a whole `/`-separated path. */
export const globRegex = (glob: string): RegExp => new RegExp(`^(?:${globSource(glob)})$`, "s")

/** One line of an ignore file (or one override glob), compiled. */
export interface IgnoreRule {
  readonly regex: RegExp
  /** A `!` line: re-includes what earlier lines excluded. */
  readonly whitelist: boolean
  readonly onlyDir: boolean
}

/**
 * Parses one gitignore line; `undefined` for blanks, comments and lines
 * ripgrep would reject (it skips those too).
 */
export const ignoreRule = (raw: string): IgnoreRule | undefined => {
  let line = raw
  if (line.startsWith("#")) return undefined
  if (!line.endsWith("\\ ")) line = line.replace(/\s+$/, "")
  if (line === "") return undefined
  let whitelist = false
  let absolute = false
  if (line.startsWith("\\!") || line.startsWith("\\#")) {
    line = line.slice(1)
    absolute = line.startsWith("/")
  } else {
    if (line.startsWith("!")) {
      whitelist = true
      line = line.slice(1)
    }
    if (line.startsWith("/")) {
      line = line.slice(1)
      absolute = true
    }
  }
  let onlyDir = false
  if (line.endsWith("/")) {
    onlyDir = true
    line = line.slice(0, -1)
  }
  let actual = line
  if (!absolute && !actual.includes("/") && !actual.startsWith("**/") && actual !== "**") actual = `**/${actual}`
  if (actual.endsWith("/**")) actual = `${actual}/*`
  try {
    return { regex: globRegex(actual), whitelist, onlyDir }
  } catch {
    return undefined
  }
}

/** The verdict of a set of rules on a path: the last matching rule decides. */
export type Verdict = "ignore" | "whitelist" | undefined

export const matchRules = (rules: ReadonlyArray<IgnoreRule>, path: string, isDir: boolean): Verdict => {
  for (let k = rules.length - 1; k >= 0; k--) {
    const rule = rules[k]!
    if (rule.onlyDir && !isDir) continue
    if (rule.regex.test(path)) return rule.whitelist ? "whitelist" : "ignore"
  }
  return undefined
}

/** Parses an ignore file's text into rules (a leading BOM and `\r\n` line ends are accepted). */
export const parseIgnoreFile = (text: string): ReadonlyArray<IgnoreRule> => {
  const rules: Array<IgnoreRule> = []
  const lines = text.replace(/^\uFEFF/, "").split("\n")
  for (const line of lines) {
    const rule = ignoreRule(line.endsWith("\r") ? line.slice(0, -1) : line)
    if (rule !== undefined) rules.push(rule)
  }
  return rules
}

/**
 * Override globs (ripgrep's `-g`): a glob selects (whitelists) what it
 * matches, `!glob` excludes; when any glob selects, a file no glob matches
 * is excluded. Overrides decide before ignore files and hidden-ness.
 */
export interface Overrides {
  readonly rules: ReadonlyArray<IgnoreRule>
  readonly hasWhitelist: boolean
}

/** Compiles override globs; a `GlobSyntax` error names the bad glob. */
export const overrides = (globs: ReadonlyArray<string>): Overrides => {
  const rules: Array<IgnoreRule> = []
  for (const glob of globs) {
    // An override is a gitignore line read the other way round.
    const negated = glob.startsWith("!")
    const rule = ignoreRule(negated ? glob.slice(1) : `!${glob}`)
    if (rule === undefined) {
      // Surface the compile error instead of silently dropping the glob.
      const body = negated ? glob.slice(1) : glob
      globRegex(body.replace(/^\//, "").replace(/\/$/, ""))
      continue
    }
    rules.push(rule)
  }
  return { rules, hasWhitelist: rules.some((r) => r.whitelist) }
}

export const matchOverrides = (o: Overrides, path: string, isDir: boolean): Verdict => {
  if (o.rules.length === 0) return undefined
  const verdict = matchRules(o.rules, path, isDir)
  if (verdict === undefined && o.hasWhitelist && !isDir) return "ignore"
  return verdict
}

/**
 * A file-type filter (ripgrep's `-t`): globs tested against the file name
 * only. A matching file is selected; any other file is excluded;
 * directories are not concerned.
 */
export interface TypeFilter {
  readonly globs: ReadonlyArray<RegExp>
}

export const typeFilter = (globs: ReadonlyArray<string>): TypeFilter => ({ globs: globs.map(globRegex) })

export const matchType = (t: TypeFilter | undefined, name: string, isDir: boolean): Verdict => {
  if (t === undefined || isDir) return undefined
  return t.globs.some((g) => g.test(name)) ? "whitelist" : "ignore"
}
