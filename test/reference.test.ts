/**
 * `npm run docs` makes an API reference from the JSDoc of every public
 * module: each package has its page, each public module with exports is on
 * it, and each export there has the words its JSDoc gives.
 */
import { readdirSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { reference } from "../scripts/docs.ts"

const root = join(import.meta.dirname, "..")

const publicModules = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) return name === "internal" ? [] : publicModules(full)
    return name.endsWith(".ts") && name !== "index.ts" ? [full] : []
  })

describe("npm run docs", () => {
  const files = reference()

  it("writes an index and one page per package", () => {
    expect([...files.keys()].sort()).toEqual([
      "README.md",
      "agentese.md",
      "core.md",
      "laws.md",
      "tools.md",
      "wrappers.md"
    ])
    expect(files.get("README.md")).toContain("[@ugent/core](core.md)")
  })

  it("lists every public module of each package, by the specifier it is imported with", () => {
    for (const [pkg, page] of [
      ["packages/core", "core.md"],
      ["packages/tools", "tools.md"],
      ["packages/wrappers", "wrappers.md"],
      ["packages/agentese", "agentese.md"],
      ["laws", "laws.md"]
    ] as const) {
      for (const file of publicModules(join(root, pkg, "src"))) {
        expect(files.get(page), relative(root, file)).toContain(`Source: [${relative(root, file)}]`)
      }
    }
    expect(files.get("agentese.md")).toContain("## @ugent/agentese/adapters/openai")
    expect(files.get("tools.md")).toContain("## @ugent/tools/file/Read")
  })

  it("gives each export its JSDoc, examples included, and leaves the internal ones out", () => {
    const core = files.get("core.md")!
    expect(core).toContain("#### `UnknownArguments` (class, since 0.2.0)")
    expect(core).toContain("Did you mean offset (for startLine), limit (for endLine)?")
    expect(core).not.toContain("nearestKeys")
    expect(core).not.toContain("@category")
  })

  it("documents what a public module re-exports from an internal one, as if it declared it", () => {
    const wrappers = files.get("wrappers.md")!
    expect(wrappers).toContain("#### `TraceOptions` (type, since 0.2.0)")
    expect(wrappers).toContain("#### `TraceRecord` (const, since 0.1.0)")
    expect(wrappers).toContain("#### `PgOptions` (type, since 0.1.0)")
    expect(files.get("tools.md")).toContain("#### `SandboxShape` (type, since 0.2.0)")
  })
})
