/**
 * The key a caller most likely meant when it sent one a tool does not take:
 * the same name in another case or spelling (`file_path` for `filePath`), a
 * word models often use for it (`startLine` for `offset`), or a near typo.
 * Small and our own: no library knows which argument names models reach for.
 *
 * @internal
 */

/** Edit distance (Levenshtein), one row at a time. */
const distance = (a: string, b: string): number => {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const kept = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1))
      previous = kept
    }
  }
  return row[b.length]!
}

/** A name without case, `_` or `-`: `file_path`, `filePath` and `FILE-PATH` are one name. */
const normal = (key: string) => key.toLowerCase().replace(/[_-]/g, "")

/**
 * Words models send for the names tools take (normalised), by the name they
 * mean; where a tool takes two names a word fits, the one listed first wins
 * (`from` is `startLine` where a tool takes it, else `offset`).
 */
const aliases: Readonly<Record<string, ReadonlyArray<string>>> = {
  startLine: ["start", "line", "linestart", "fromline", "from", "firstline", "begin"],
  endLine: ["end", "lineend", "toline", "to", "lastline", "until"],
  path: ["file", "filepath", "filename", "dir", "directory", "folder", "target"],
  offset: ["startline", "start", "line", "linestart", "fromline", "from", "firstline", "begin", "skip"],
  limit: [
    "endline",
    "end",
    "lineend",
    "toline",
    "to",
    "lastline",
    "lines",
    "count",
    "maxlines",
    "numlines",
    "max",
    "n"
  ],
  pattern: ["query", "regex", "regexp", "search", "q", "term", "glob"],
  content: ["text", "contents", "data", "body"],
  command: ["cmd", "script", "shell"],
  url: ["uri", "href", "link"],
  oldText: ["old", "oldstring", "search", "find", "before"],
  newText: ["new", "newstring", "replace", "replacement", "after"],
  rev: ["revision", "commit", "ref", "sha"]
}

/**
 * For each unknown key, the known key it most likely means, if any; each
 * known key is suggested once, and a key the input already has is not
 * suggested.
 */
export const nearestKeys = (
  unknown: ReadonlyArray<string>,
  known: ReadonlyArray<string>,
  present: ReadonlySet<string>
): Record<string, string> => {
  const free = new Set(known.filter((k) => !present.has(k)))
  const out: Record<string, string> = {}
  const take = (u: string, k: string | undefined) => {
    if (k === undefined) return false
    out[u] = k
    free.delete(k)
    return true
  }
  // Exact respellings first, then the words models use, then typos: a typo never takes a key meant by name.
  const pending = unknown.filter(
    (u) =>
      !take(
        u,
        [...free].find((k) => normal(k) === normal(u))
      )
  )
  const rest = pending.filter(
    (u) =>
      !take(
        u,
        Object.keys(aliases).find((k) => free.has(k) && aliases[k]!.includes(normal(u)))
      )
  )
  for (const u of rest) {
    let best: string | undefined
    let bestDistance = Math.max(1, Math.floor(u.length / 3)) + 1
    for (const k of free) {
      const d = distance(normal(u), normal(k))
      if (d < bestDistance) {
        best = k
        bestDistance = d
      }
    }
    take(u, best)
  }
  return out
}
