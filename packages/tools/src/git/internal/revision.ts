/**
 * The revisions the git tools accept, checked before any backend sees them:
 * a name (HEAD, `@`, a branch, tag or other ref, or 4 to 40 hex digits of a
 * hash) followed by any number of `~N` / `^N` steps. Anything else is refused,
 * first of all a value starting with `-`, which git could read as an option
 * (CVE-2025-68144), and also ranges, reflog selectors, `:path` and `:/text`
 * searches, whitespace and control characters. Both backends share this
 * grammar, so they accept and refuse exactly the same revisions.
 *
 * @internal
 */
import { Effect } from "effect"
import { InvalidRevision } from "../GitError.ts"

export interface Step {
  /** `~` walks first parents; `^` picks the n-th parent (`^0` is the commit itself). */
  readonly kind: "~" | "^"
  readonly n: number
}

export interface ParsedRevision {
  readonly text: string
  readonly base: string
  readonly steps: ReadonlyArray<Step>
}

const HEX = /^[0-9a-f]{4,40}$/i
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const FORBIDDEN = /[\u0000-\u0020\u007f:?*[\\{}]|\.\.|@\{/

const validRefName = (name: string): boolean => {
  if (name === "" || name.length > 1024 || name.endsWith("/") || name.endsWith(".")) return false
  for (const part of name.split("/")) {
    if (part === "" || part.startsWith(".") || part.endsWith(".lock")) return false
  }
  return true
}

/** Whether a base name is (possibly) an abbreviated or full hash. */
export const isHex = (s: string): boolean => HEX.test(s)

export const parseRevision = (text: string): Effect.Effect<ParsedRevision, InvalidRevision> => {
  if (text.startsWith("-")) return Effect.fail(new InvalidRevision({ revision: text, reason: "option-like" }))
  if (text === "" || FORBIDDEN.test(text)) return Effect.fail(new InvalidRevision({ revision: text, reason: "syntax" }))
  const cut = text.search(/[~^]/)
  const base = cut === -1 ? text : text.slice(0, cut)
  const rest = cut === -1 ? "" : text.slice(cut)
  if (!/^([~^][0-9]*)*$/.test(rest) || !validRefName(base)) {
    return Effect.fail(new InvalidRevision({ revision: text, reason: "syntax" }))
  }
  const steps: Array<Step> = []
  for (const m of rest.matchAll(/([~^])([0-9]*)/g)) {
    const n = m[2] === "" ? 1 : Number(m[2])
    if (!Number.isSafeInteger(n) || n > 1_000_000) {
      return Effect.fail(new InvalidRevision({ revision: text, reason: "syntax" }))
    }
    steps.push({ kind: m[1] as "~" | "^", n })
  }
  return Effect.succeed({ text, base, steps })
}

/** git's empty tree (SHA-1). */
export const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
