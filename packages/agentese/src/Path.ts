/**
 * An AGENTESE path names a tool the way a sentence names a thing:
 * `context.holon.aspect…`, e.g. `world.tools.file.read` or
 * `self.tools.task.create`. Segments are lowercase words (letters, digits,
 * hyphens), so the provider-safe form (`world_tools_file_read`, for LLM
 * providers and strict MCP clients) maps back without ambiguity.
 *
 * @since 0.1.0
 */
import { Option, Schema } from "effect"

const segment = "[a-z][a-z0-9-]*"
const pathPattern = new RegExp(`^${segment}(\\.${segment})+$`)

/**
 * A path, validated.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Path = Schema.String.check(
  Schema.isPattern(pathPattern, {
    message:
      "A path is dot-separated lowercase segments, such as world.tools.file.read (list the paths to see them all)"
  })
).pipe(Schema.brand("AgentesePath"))

/**
 * @category models
 * @since 0.1.0
 */
export type Path = typeof Path.Type

/**
 * Whether a string is a well-formed path.
 *
 * @category guards
 * @since 0.1.0
 */
export const isPath = (s: string): s is Path => pathPattern.test(s)

/**
 * Parses a path.
 *
 * **Example** (Parsing paths)
 * ```ts
 * import { Path } from "@ugent/agentese"
 * import { Option } from "effect"
 * console.log(Option.isSome(Path.parse("world.tools.file.read")), Option.isSome(Path.parse("World Tools")))
 * // => true false
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const parse = (s: string): Option.Option<Path> => (isPath(s) ? Option.some(s) : Option.none())

/**
 * The provider-safe name of a path: dots become underscores
 * (`^[a-zA-Z0-9_-]{1,64}$`).
 *
 * **Example** (Round trip)
 * ```ts
 * import { Path } from "@ugent/agentese"
 * const name = Path.toProviderName("world.tools.file.read")
 * console.log(name, Path.fromProviderName(name))
 * // => world_tools_file_read { _id: 'Option', _tag: 'Some', value: 'world.tools.file.read' }
 * ```
 *
 * @category conversions
 * @since 0.1.0
 */
export const toProviderName = (path: Path | string): string => path.replaceAll(".", "_")

/**
 * The path of a provider-safe name, if it names a well-formed path.
 *
 * @category conversions
 * @since 0.1.0
 */
export const fromProviderName = (name: string): Option.Option<Path> => parse(name.replaceAll("_", "."))

/**
 * Whether a path matches a pattern. A `*` inside a segment matches any
 * characters of that segment; a final `*` segment matches one or more
 * segments; `*` alone matches every path.
 *
 * **Example** (Patterns)
 * ```ts
 * import { Path } from "@ugent/agentese"
 * console.log(
 *   Path.matches("world.tools.file.*", "world.tools.file.read"),
 *   Path.matches("world.tools.*", "world.tools.git.log"),
 *   Path.matches("world.*.file.read", "world.tools.file.read"),
 *   Path.matches("world.tools.file.*", "world.tools.filesystem.read")
 * )
 * // => true true true false
 * ```
 *
 * @category patterns
 * @since 0.1.0
 */
export const matches = (pattern: string, path: string): boolean => compile(pattern).test(path)

const cache = new Map<string, RegExp>()
const compile = (pattern: string): RegExp => {
  const hit = cache.get(pattern)
  if (hit !== undefined) return hit
  const segments = pattern.split(".")
  const source = segments
    .map((seg, i) => {
      if (seg === "*") return i === segments.length - 1 ? "[^.]+(?:\\.[^.]+)*" : "[^.]+"
      return seg.split("*").map(escapeRegExp).join("[^.]*")
    })
    .join("\\.")
  const re = new RegExp(`^${source}$`)
  cache.set(pattern, re)
  return re
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
