/**
 * The search family: `search.grep`, served under `world.tools`, telling a
 * large result as `Found 47 matches in 12 files`. Its tool needs the host's
 * `Workspace`.
 *
 * @since 0.2.0
 */
import { Family } from "@ugent/core"
import * as Grep from "./Grep.ts"

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

const grepSummary = (o: Grep.Output): string => {
  switch (o.mode) {
    case "files":
      return `Found matches in ${plural(o.files.length, "file")} (${plural(o.filesSearched, "file")} searched)`
    case "content":
      return `Found ${plural(o.totalMatches, "match", "matches")} in ${plural(o.matches.length, "file")}`
    case "count":
      return `Counted ${plural(o.totalMatches, "match", "matches")} in ${plural(o.counts.length, "file")}`
  }
}

/**
 * The family, for a server's `families` option.
 *
 * @category families
 * @since 0.2.0
 */
export const family = Family.make({
  name: "search",
  prefix: "world.tools",
  tools: { "search.grep": Grep.grep },
  present: {
    "search.grep": (o) => ({
      summary: grepSummary(o),
      next: "narrow the search with glob or type, or lower maxMatches (outputMode files lists only the file names)"
    })
  }
})
