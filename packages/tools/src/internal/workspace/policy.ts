/**
 * The compiled form of a workspace policy: blocked names, default ignores and
 * writable globs turned into regular expressions once, so that checking a
 * path costs one or two regex tests per segment. Patterns are picomatch
 * globs; a pattern without `/` is tested against every segment of a path,
 * one with `/` against the whole path relative to the root.
 *
 * @internal
 */
import picomatch from "picomatch"

export interface PolicyInput {
  readonly blocked: ReadonlyArray<string>
  readonly ignored: ReadonlyArray<string>
  readonly writable: ReadonlyArray<string>
  readonly hooks: ReadonlyArray<string>
}

export interface CompiledPolicy {
  /** The blocked rule a relative path (`/`-separated, `.` for the root) matches, if any. */
  readonly blockedBy: (relative: string) => string | undefined
  /** Whether a relative path has an ignored segment (or matches an ignored path glob). */
  readonly isIgnored: (relative: string) => boolean
  /** Whether a relative path may be written at L1. */
  readonly isWritable: (relative: string) => boolean
  /** The hook rule a relative path matches, if any: a script git (or a hook manager it runs) executes. */
  readonly hookBy: (relative: string) => string | undefined
}

interface Rule {
  readonly pattern: string
  readonly re: RegExp
}

const compileRules = (patterns: ReadonlyArray<string>, nocase: boolean): ReadonlyArray<Rule> =>
  patterns.map((pattern) => ({ pattern, re: picomatch.makeRe(pattern, { dot: true, nocase }) }))

/** One regex for a set of rules, so the common case (no match) is a single test. */
const union = (rules: ReadonlyArray<Rule>, nocase: boolean): RegExp | undefined =>
  rules.length === 0 ? undefined : new RegExp(rules.map((r) => `(?:${r.re.source})`).join("|"), nocase ? "i" : "")

const matcher = (patterns: ReadonlyArray<string>, nocase: boolean) => {
  const segmentRules = compileRules(
    patterns.filter((p) => !p.includes("/")),
    nocase
  )
  const pathRules = compileRules(
    patterns.filter((p) => p.includes("/")),
    nocase
  )
  // One regex for all segment rules: irregexp runs the alternation faster than separate string tests.
  const anySegment = union(segmentRules, nocase)
  const anyPath = union(pathRules, nocase)
  const segmentRule = (segment: string): string | undefined =>
    anySegment?.test(segment) ? segmentRules.find((r) => r.re.test(segment))?.pattern : undefined
  // The paths of a walk share their directories: remember each directory's verdict (bounded), so a path
  // costs one lookup and one test of its last segment.
  const directories = new Map<string, string | null>()
  const segmentsRule = (relative: string): string | undefined => {
    const slash = relative.lastIndexOf("/")
    if (slash === -1) return segmentRule(relative)
    const dir = relative.slice(0, slash)
    let verdict = directories.get(dir)
    if (verdict === undefined) {
      verdict = segmentsRule(dir) ?? null
      if (directories.size >= 4096) directories.clear()
      directories.set(dir, verdict)
    }
    return verdict ?? segmentRule(relative.slice(slash + 1))
  }
  return (relative: string): string | undefined => {
    if (relative === "." || relative === "") return undefined
    if (anySegment !== undefined) {
      const rule = segmentsRule(relative)
      if (rule !== undefined) return rule
    }
    if (anyPath?.test(relative)) return pathRules.find((r) => r.re.test(relative))?.pattern
    return undefined
  }
}

export const compile = (policy: PolicyInput): CompiledPolicy => {
  const blocked = matcher(policy.blocked, true)
  const ignored = matcher(policy.ignored, false)
  const hooks = matcher(policy.hooks, true)
  const writable = picomatch(policy.writable.length === 0 ? ["!**"] : [...policy.writable], { dot: true })
  return {
    blockedBy: blocked,
    isIgnored: (relative) => ignored(relative) !== undefined,
    isWritable: (relative) => relative !== "." && blocked(relative) === undefined && writable(relative),
    hookBy: hooks
  }
}
