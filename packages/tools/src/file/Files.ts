/**
 * The file family: `file.read`, `file.write`, `file.edit`, `file.list` and
 * `file.glob`, served under `world.tools`, each telling a large result in
 * the design documents' words (`Read 120 lines from src/a.ts`). Its tools
 * need the host's `Workspace`.
 *
 * @since 0.2.0
 */
import { Family } from "@ugent/core"
import * as Edit from "./Edit.ts"
import * as Glob from "./Glob.ts"
import * as List from "./List.ts"
import * as Read from "./Read.ts"
import * as Write from "./Write.ts"

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/**
 * The family, for a server's `families` option.
 *
 * **Example** (Its paths)
 * ```ts
 * import { Files } from "@ugent/tools"
 * console.log(Files.family.prefix, Files.family.name)
 * // => world.tools file
 * ```
 *
 * @category families
 * @since 0.2.0
 */
export const family = Family.make({
  name: "file",
  prefix: "world.tools",
  tools: {
    "file.read": Read.read,
    "file.write": Write.write,
    "file.edit": Edit.edit,
    "file.list": List.list,
    "file.glob": Glob.glob
  },
  present: {
    "file.read": (o) => ({
      summary: `Read ${plural(o.endLine - o.startLine + 1, "line")} from ${o.path} (lines ${o.startLine}-${o.endLine} of ${o.totalLines})`,
      next: `read fewer lines at a time with world.tools.file.read {"path":${JSON.stringify(o.path)},"offset":${o.startLine},"limit":200}`
    }),
    "file.write": (o) => ({ summary: `${o.created ? "Created" : "Wrote"} ${o.path} (${plural(o.bytes, "byte")})` }),
    "file.edit": (o) => ({ summary: `Edited ${o.path}: ${plural(o.replacements, "replacement")}` }),
    "file.list": (o) => ({
      summary: `Listed ${plural(o.entries.length, "entry", "entries")} of ${o.path === "" ? "." : o.path}${o.truncated ? ` (of ${o.total})` : ""}`,
      next: "list a subdirectory, or use world.tools.file.glob with a narrower pattern"
    }),
    "file.glob": (o) => ({
      summary: `Found ${plural(o.totalMatches, "file")}${o.truncated ? `, ${o.files.length} listed` : ""}`,
      next: "narrow the pattern, or pass a smaller limit"
    })
  }
})
