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
}

export interface CompiledPolicy {
  /** The blocked rule a relative path (`/`-separated, `.` for the root) matches, if any. */
  readonly blockedBy: (relative: string) => string | undefined
  /** Whether a relative path has an ignored segment (or matches an ignored path glob). */
  readonly isIgnored: (relative: string) => boolean
  /** Whether a relative path may be written at L1. */
  readonly isWritable: (relative: string) => boolean
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
  const anySegment = union(segmentRules, nocase)
  const anyPath = union(pathRules, nocase)
  // Directory names repeat across the paths of a walk: remember each segment's verdict (bounded).
  const seen = new Map<string, string | null>()
  const segmentRule = (segment: string): string | undefined => {
    const known = seen.get(segment)
    if (known !== undefined) return known ?? undefined
    const rule = anySegment?.test(segment) ? segmentRules.find((r) => r.re.test(segment))?.pattern : undefined
    if (seen.size >= 4096) seen.clear()
    seen.set(segment, rule ?? null)
    return rule
  }
  return (relative: string): string | undefined => {
    if (relative === "." || relative === "") return undefined
    if (anySegment !== undefined) {
      let start = 0
      while (start <= relative.length) {
        const slash = relative.indexOf("/", start)
        const end = slash === -1 ? relative.length : slash
        const rule = segmentRule(relative.slice(start, end))
        if (rule !== undefined) return rule
        start = end + 1
      }
    }
    if (anyPath?.test(relative)) return pathRules.find((r) => r.re.test(relative))?.pattern
    return undefined
  }
}

export const compile = (policy: PolicyInput): CompiledPolicy => {
  const blocked = matcher(policy.blocked, true)
  const ignored = matcher(policy.ignored, false)
  const writable = picomatch(policy.writable.length === 0 ? ["!**"] : [...policy.writable], { dot: true })
  return {
    blockedBy: blocked,
    isIgnored: (relative) => ignored(relative) !== undefined,
    isWritable: (relative) => relative !== "." && blocked(relative) === undefined && writable(relative)
  }
}
