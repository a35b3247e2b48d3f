/**
 * Every JSDoc example of the packages runs, and prints what it says it prints.
 *
 * An example is a ```ts block inside a JSDoc comment of a source file. It is
 * written to a module under `.doctest/` (inside the repository, so package
 * imports resolve), imported with `console.log` captured, and each captured
 * line is compared with the `// => …` comment that follows its `console.log`
 * in the example. An example that throws, or prints something else, fails.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { formatWithOptions } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const outDir = join(root, ".doctest")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) return name === "node_modules" ? [] : sourceFiles(full)
    return name.endsWith(".ts") ? [full] : []
  })

interface Example {
  readonly file: string
  readonly line: number
  readonly code: string
  readonly expected: ReadonlyArray<string>
}

const examplesOf = (file: string): Array<Example> => {
  const lines = readFileSync(file, "utf8").split("\n")
  const out: Array<Example> = []
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\*\s*```ts\s*$/.test(lines[i]!)) continue
    const start = i
    const body: Array<string> = []
    for (i++; i < lines.length && !/^\s*\*\s*```\s*$/.test(lines[i]!); i++) {
      body.push(lines[i]!.replace(/^\s*\* ?/, ""))
    }
    const expected = body.filter((l) => /^\s*\/\/ => /.test(l)).map((l) => l.replace(/^\s*\/\/ => /, ""))
    out.push({ file, line: start + 1, code: body.join("\n"), expected })
  }
  return out
}

const dirs = ["packages/core/src", "packages/tools/src", "packages/wrappers/src", "packages/agentese/src", "laws/src"]
const examples = dirs.flatMap((d) => {
  try {
    return sourceFiles(join(root, d)).flatMap(examplesOf)
  } catch {
    return []
  }
})

mkdirSync(outDir, { recursive: true })
afterAll(() => rmSync(outDir, { recursive: true, force: true }))

describe("JSDoc examples", () => {
  it("there are examples to check", () => {
    expect(examples.length).toBeGreaterThan(10)
  })

  for (const [n, example] of examples.entries()) {
    const where = `${relative(root, example.file)}:${example.line}`
    it(`${where} runs and prints what it says`, async () => {
      const module = join(outDir, `example_${n}.ts`)
      writeFileSync(module, `${example.code}\nexport {}\n`)
      const printed: Array<string> = []
      const original = console.log
      console.log = (...args: Array<unknown>) => {
        printed.push(formatWithOptions({ breakLength: Number.POSITIVE_INFINITY, compact: 20, depth: 6 }, ...args))
      }
      try {
        await import(/* @vite-ignore */ module)
      } finally {
        console.log = original
      }
      if (example.expected.length > 0) expect(printed).toEqual(example.expected)
    })
  }
})
