/**
 * Pure path arithmetic of the jail: containment decided segment by segment on
 * absolute, normalized POSIX paths, never by string prefix (`/root_evil` is
 * not inside `/root`), and relative paths with `/` separators.
 *
 * @internal
 */
import * as path from "node:path"

const segments = (absolute: string): ReadonlyArray<string> => absolute.split("/").filter((s) => s !== "")

/** A path with no empty segment and no trailing `/` (besides `/` itself): one string comparison decides for it. */
const plain = (p: string): boolean => !p.includes("//") && (p === "/" || !p.endsWith("/"))

/** Whether `candidate` is `root` or lies below it; both absolute and normalized. */
export const isInside = (root: string, candidate: string): boolean => {
  if (plain(root) && plain(candidate)) {
    // Below means `root` and then a `/`: `/root_evil` is not inside `/root`.
    return candidate === root || candidate.startsWith(root === "/" ? "/" : `${root}/`)
  }
  const r = segments(root)
  const c = segments(candidate)
  if (c.length < r.length) return false
  for (let i = 0; i < r.length; i++) if (r[i] !== c[i]) return false
  return true
}

/** The path of `candidate` relative to `root`, `/`-separated; `.` for the root itself. */
export const relativeTo = (root: string, candidate: string): string => {
  if (plain(root) && plain(candidate) && isInside(root, candidate)) {
    return candidate === root ? "." : candidate.slice(root === "/" ? 1 : root.length + 1)
  }
  const rel = segments(candidate).slice(segments(root).length).join("/")
  return rel === "" ? "." : rel
}

/** The absolute lexical path of an input: relative inputs against the root, `..` and `.` folded. */
export const lexical = (root: string, input: string): string =>
  path.isAbsolute(input) ? path.resolve(input) : path.resolve(root, input)

export const join = (root: string, relative: string): string => (relative === "." ? root : path.join(root, relative))
