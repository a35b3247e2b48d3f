/**
 * The modules of `@ugent/tools` import each other without cycles (type-only
 * imports included): the git backends import the shared models and result
 * schemas (`git/internal/model.ts`, `git/internal/results.ts`), never the
 * tool modules or `GitBackend.ts`, which import them.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const src = join(dirname(fileURLToPath(import.meta.url)), "..", "src")

const sources = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? sources(full) : full.endsWith(".ts") ? [full] : []
  })

/** Relative imports and re-exports of a module (comments removed, so JSDoc examples do not count). */
const importsOf = (file: string): Array<string> => {
  const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "")
  return [...code.matchAll(/^(?:import|export)\s[^'"]*?from\s+["'](\.[^"']+)["']/gm)].map((m) =>
    resolve(dirname(file), m[1]!)
  )
}

/** Every cycle met by a depth-first walk of the graph, as `a -> b -> a`. */
const cycles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): Array<string> => {
  const found: Array<string> = []
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const done = new Set<string>()
  const visit = (node: string) => {
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue
      if (onStack.has(next)) found.push([...stack.slice(stack.indexOf(next)), next].join(" -> "))
      else if (!done.has(next)) visit(next)
    }
    stack.pop()
    onStack.delete(node)
    done.add(node)
  }
  for (const node of graph.keys()) if (!done.has(node)) visit(node)
  return found
}

/**
 * Cycles known and owned elsewhere, to be broken by their owners; the test keeps any other from appearing.
 * The system family's service module and its machinery share types both ways (type-only).
 */
const known = new Set(["system/Sandbox.ts -> internal/system/sandbox.ts -> system/Sandbox.ts"])

describe("@ugent/tools imports", () => {
  it("have no cycles, type-only imports included", () => {
    const graph = new Map(
      sources(src).map((f) => [relative(src, f), importsOf(f).map((i) => relative(src, i))] as const)
    )
    expect(graph.size).toBeGreaterThan(40)
    expect(cycles(graph).filter((c) => !known.has(c))).toEqual([])
  })

  it("the check finds a cycle when there is one", () => {
    const graph = new Map([
      ["GitBackend.ts", ["internal/native.ts"]],
      ["internal/native.ts", ["internal/model.ts", "GitBackend.ts"]],
      ["internal/model.ts", []]
    ])
    expect(cycles(graph)).toEqual(["GitBackend.ts -> internal/native.ts -> GitBackend.ts"])
  })
})
