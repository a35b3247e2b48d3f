/**
 * No import cycle among the source modules of the packages and the laws.
 *
 * Every `import` and `export … from` (type-only ones too: a cycle of types
 * still ties two modules into one) of `packages/*\/src` and `laws/src` is read
 * with rolldown's parser (oxc; it reads TypeScript as it is), relative paths
 * and `@ugent/*` names are resolved through each package's `@ugent/source`
 * exports, and the strongly connected components of that graph are listed: a
 * component of more than one module, or a module importing itself, is a cycle.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseSync } from "rolldown/utils"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [full] : []
  })

interface Package {
  readonly dir: string
  readonly exports: Readonly<Record<string, unknown>>
}

const packageDirs = [
  ...readdirSync(join(root, "packages")).map((name) => join(root, "packages", name)),
  join(root, "laws")
].filter((dir) => existsSync(join(dir, "package.json")) && existsSync(join(dir, "src")))

const packages = new Map<string, Package>(
  packageDirs.map((dir) => {
    const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      name: string
      exports: Record<string, unknown>
    }
    return [json.name, { dir, exports: json.exports }]
  })
)

const sourceTarget = (entry: unknown): string | undefined =>
  typeof entry === "object" && entry !== null && "@ugent/source" in entry
    ? String((entry as Record<string, unknown>)["@ugent/source"])
    : undefined

/** Resolves a specifier to a source file of the repository, or undefined for anything outside it. */
const resolveSpecifier = (from: string, specifier: string): string | undefined => {
  if (specifier.startsWith(".")) return resolve(dirname(from), specifier)
  const match = /^(@ugent\/[^/]+)(\/.*)?$/.exec(specifier)
  const pkg = match === null ? undefined : packages.get(match[1]!)
  if (match === null || pkg === undefined) return undefined
  const sub = `.${match[2] ?? ""}`
  const exact = sourceTarget(pkg.exports[sub])
  if (exact !== undefined) return join(pkg.dir, exact)
  const pattern = sourceTarget(pkg.exports["./*"])
  return sub === "." || pattern === undefined ? undefined : join(pkg.dir, pattern.replace("*", sub.slice(2)))
}

const files = packageDirs.flatMap((dir) => sourceFiles(join(dir, "src")))

const graph = new Map<string, ReadonlySet<string>>(
  files.map((file) => {
    const { module, errors } = parseSync(file, readFileSync(file, "utf8"), { lang: "ts" })
    if (errors.length > 0) throw new Error(`${relative(root, file)} does not parse: ${errors[0]!.message}`)
    const specifiers = [
      ...module.staticImports.map((i) => i.moduleRequest.value),
      ...module.staticExports.flatMap((e) => e.entries.flatMap((x) => (x.moduleRequest ? [x.moduleRequest.value] : [])))
    ]
    const targets = specifiers.flatMap((s) => {
      const target = resolveSpecifier(file, s)
      return target === undefined ? [] : [target]
    })
    return [file, new Set(targets)]
  })
)

/** Tarjan's strongly connected components: each cycle of the graph lies inside one. */
const components = (edges: ReadonlyMap<string, ReadonlySet<string>>): Array<Array<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  const visit = (node: string): void => {
    index.set(node, index.size)
    low.set(node, index.get(node)!)
    stack.push(node)
    onStack.add(node)
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!))
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      found.push(component)
    }
  }
  for (const node of edges.keys()) if (!index.has(node)) visit(node)
  return found
}

describe("import graph", () => {
  it("reads every source module and resolves the imports between packages", () => {
    expect(files.length).toBeGreaterThan(100)
    const core = join(root, "packages/core/src/index.ts")
    expect([...graph.values()].some((targets) => targets.has(core))).toBe(true)
  })

  it("has no import cycle among the packages' source modules", () => {
    const cycles = components(graph)
      .filter((c) => c.length > 1 || graph.get(c[0]!)?.has(c[0]!))
      .map((c) =>
        c
          .map((f) => relative(root, f))
          .sort()
          .join(" ↔ ")
      )
    expect(cycles).toEqual([])
  })

  it("finds a cycle when there is one", () => {
    const a = new Map([
      ["a", new Set(["b"])],
      ["b", new Set(["c"])],
      ["c", new Set(["a"])],
      ["d", new Set(["a"])]
    ])
    expect(components(a).filter((c) => c.length > 1)).toEqual([["c", "b", "a"]])
  })
})
