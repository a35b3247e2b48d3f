/**
 * Which files a cached call depends on, read from its encoded input and
 * output, so that a change published on the `Changes` hub drops exactly the
 * entries it may have made stale. The rules lean towards dropping too much:
 * a stale read after a write is a bug, a second read is only a cost.
 *
 * @internal
 */
import type { Changes } from "@ugent/core"

/** Input keys whose string values name files, directories or globs. */
const pathKeys = new Set([
  "path",
  "paths",
  "file",
  "files",
  "filePath",
  "target",
  "source",
  "destination",
  "cwd",
  "root",
  "dir",
  "directory",
  "folder",
  "glob",
  "include",
  "exclude"
])

const globChars = /[*?[\]{}!]/

/** `./a//b/` -> `a/b`; the workspace root itself (`.`, `./`, ``) -> ``. */
export const normalize = (p: string): string => {
  let s = p.replace(/\\/g, "/").replace(/\/{2,}/g, "/")
  while (s.startsWith("./")) s = s.slice(2)
  if (s === ".") s = ""
  if (s.length > 1 && s.endsWith("/")) s = s.slice(0, -1)
  return s
}

/** The directory part of a glob before its first wildcard: `src/**\/*.ts` -> `src`. */
const staticPrefix = (glob: string): string => {
  const segments = normalize(glob).split("/")
  const fixed: Array<string> = []
  for (const segment of segments) {
    if (globChars.test(segment)) break
    fixed.push(segment)
  }
  return fixed.join("/")
}

/** What one cached entry depends on. */
export interface PathRefs {
  /** Paths, directories and glob roots named by the input; a change at or under one of them matters. */
  readonly inputs: ReadonlyArray<string>
  /** Short strings of the output that may be paths; a change of exactly one of them matters. */
  readonly outputs: ReadonlySet<string>
  /** The call may depend on any file (it reads the file system and names no path). */
  readonly everything: boolean
}

const maxOutputStrings = 10_000

/** Collects the path strings of an encoded input. */
export const inputRefs = (encodedInput: unknown, readsFs: boolean): Pick<PathRefs, "inputs" | "everything"> => {
  const out: Array<string> = []
  const visit = (value: unknown, key: string | undefined, depth: number) => {
    if (depth > 16) return
    if (typeof value === "string") {
      if (key !== undefined && pathKeys.has(key))
        out.push(globChars.test(value) ? staticPrefix(value) : normalize(value))
    } else if (Array.isArray(value)) {
      for (const v of value) visit(v, key, depth + 1)
    } else if (typeof value === "object" && value !== null) {
      for (const [k, v] of Object.entries(value)) visit(v, k, depth + 1)
    }
  }
  visit(encodedInput, undefined, 0)
  return { inputs: out, everything: readsFs && out.length === 0 }
}

/** Collects the short, single-line strings of an encoded output (any of them may be a path). */
export const outputRefs = (
  encodedOutput: unknown
): { readonly outputs: ReadonlySet<string>; readonly overflow: boolean } => {
  const out = new Set<string>()
  let overflow = false
  const visit = (value: unknown, depth: number) => {
    if (overflow || depth > 16) return
    if (typeof value === "string") {
      if (value.length > 0 && value.length <= 4096 && !value.includes("\n")) {
        out.add(normalize(value))
        if (out.size > maxOutputStrings) overflow = true
      }
    } else if (Array.isArray(value)) {
      for (const v of value) visit(v, depth + 1)
    } else if (typeof value === "object" && value !== null) {
      for (const v of Object.values(value)) visit(v, depth + 1)
    }
  }
  visit(encodedOutput, 0)
  return { outputs: out, overflow }
}

const isAtOrUnder = (target: string, dir: string): boolean =>
  dir === "" || dir === "/" || target === dir || target.startsWith(`${dir}/`)

/** Whether a change may have made an entry with these references stale. */
export const affects = (refs: PathRefs, change: Changes.FileChange): boolean => {
  if (refs.everything) return true
  const targets = [normalize(change.relative), normalize(change.path)]
  for (const p of refs.inputs) {
    for (const t of targets) if (isAtOrUnder(t, p)) return true
  }
  for (const t of targets) if (refs.outputs.has(t)) return true
  return false
}
