/**
 * The API reference, made from the JSDoc of every public module:
 * `npm run docs` writes it to `docs/api/` (not committed: it is made from the
 * sources whenever it is wanted, so it is never stale).
 *
 * Our own small reader, because TypeDoc (0.28, the newest) needs TypeScript's
 * JavaScript compiler API, which TypeScript 7 (the project's compiler) does
 * not ship; TypeDoc supports TypeScript 6.0 at most, and a second TypeScript
 * beside the project's would be a peer conflict. The sources follow one
 * house style (a module comment first; a JSDoc with `@category` and `@since`
 * right above each export), which is all this reader needs.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "docs", "api")
const packages = ["packages/core", "packages/tools", "packages/wrappers", "packages/agentese", "laws"] as const

interface Entry {
  readonly name: string
  readonly kind: string
  readonly category: string
  readonly since: string | undefined
  readonly text: string
}

interface Module {
  readonly specifier: string
  readonly file: string
  readonly summary: string
  readonly entries: ReadonlyArray<Entry>
}

/** The text of a JSDoc block, without its stars, and its tags. */
const readDoc = (block: string): { readonly text: string; readonly tags: Record<string, string> } => {
  const lines = block
    .replace(/^\/\*\*\s?/, "")
    .replace(/\s*\*\/$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*\* ?/, ""))
  const tags: Record<string, string> = {}
  const text: Array<string> = []
  for (const line of lines) {
    const tag = /^@(\w+)\s*(.*)$/.exec(line.trim())
    if (tag !== null) tags[tag[1]!] = tag[2]!.trim()
    else text.push(line)
  }
  return { text: text.join("\n").trim(), tags }
}

const declaration =
  /^export\s+(?:declare\s+)?(?:abstract\s+)?(const|class|interface|type|function|namespace|enum)\s+([A-Za-z_$][\w$]*)/

// A public module may document what an internal module declares: `export { X } from "./internal/…"`.
const reexport = /^export\s+(type\s+)?\{\s*([A-Za-z_$][\w$]*)\s*\}\s+from\s/

/** A module's summary (its first comment) and its documented exports, in source order. */
const readModule = (file: string): Pick<Module, "summary" | "entries"> => {
  const source = readFileSync(file, "utf8")
  const first = /^\s*(\/\*\*[\s\S]*?\*\/)/.exec(source)
  const summary = first === null ? "" : readDoc(first[1]!).text
  const entries: Array<Entry> = []
  for (const m of source.matchAll(/(\/\*\*(?:(?!\*\/)[\s\S])*\*\/)\s*\n(export [^\n]*)/g)) {
    const head = declaration.exec(m[2]!)
    const again = head === null ? reexport.exec(m[2]!) : null
    if (head === null && again === null) continue
    const doc = readDoc(m[1]!)
    if (doc.tags.internal !== undefined) continue
    entries.push({
      name: head?.[2] ?? again![2]!,
      kind: head?.[1] ?? (again![1] === undefined ? "const" : "type"),
      category: doc.tags.category ?? "other",
      since: doc.tags.since,
      text: doc.text
    })
  }
  return { summary, entries }
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name)
      if (statSync(full).isDirectory()) return name === "internal" ? [] : sourceFiles(full)
      return name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts") ? [full] : []
    })

/** The public modules of a package and the specifiers they are imported by. */
const modulesOf = (
  pkg: string
): { readonly name: string; readonly description: string; readonly modules: Array<Module> } => {
  const manifest = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8")) as {
    readonly name: string
    readonly description?: string
    readonly exports: Record<string, null | string | Record<string, string>>
  }
  // Explicit entries first (`./adapters/openai` → src/adapters/OpenAi.ts); the rest through `./*`.
  const named = new Map<string, string>()
  for (const [key, target] of Object.entries(manifest.exports)) {
    const source = typeof target === "object" && target !== null ? target["@ugent/source"] : undefined
    if (source !== undefined && !key.includes("*")) named.set(join(root, pkg, source), key)
  }
  const modules = sourceFiles(join(root, pkg, "src")).map((file): Module => {
    const rel = relative(join(root, pkg, "src"), file).replaceAll("\\", "/")
    const key = named.get(file) ?? (rel.endsWith("index.ts") ? undefined : `./${rel.replace(/\.ts$/, "")}`)
    const specifier =
      key === undefined ? `${manifest.name} (${rel})` : `${manifest.name}${key === "." ? "" : key.slice(1)}`
    return { specifier, file: `${pkg}/src/${rel}`, ...readModule(file) }
  })
  return { name: manifest.name, description: manifest.description ?? "", modules }
}

const anchor = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, "")
    .replace(/ /g, "-")

/** One package's reference page. */
const page = (pkg: ReturnType<typeof modulesOf>): string => {
  const lines: Array<string> = [
    `# ${pkg.name}`,
    "",
    pkg.description,
    "",
    "Generated from the sources' JSDoc by `npm run docs`; do not edit.",
    "",
    ...pkg.modules.filter((m) => m.entries.length > 0).map((m) => `- [${m.specifier}](#${anchor(m.specifier)})`),
    ""
  ]
  for (const m of pkg.modules) {
    if (m.entries.length === 0) continue
    lines.push(`## ${m.specifier}`, "", `Source: [${m.file}](../../${m.file})`, "", m.summary, "")
    const categories = [...new Set(m.entries.map((e) => e.category))]
    for (const category of categories) {
      lines.push(`### ${category}`, "")
      for (const e of m.entries.filter((x) => x.category === category)) {
        lines.push(`#### \`${e.name}\` (${e.kind}${e.since !== undefined ? `, since ${e.since}` : ""})`, "", e.text, "")
      }
    }
  }
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`
}

const index = (pkgs: ReadonlyArray<ReturnType<typeof modulesOf>>): string =>
  [
    "# API reference",
    "",
    "Every public module of the ugent packages, with the JSDoc of its exports (descriptions and runnable",
    "examples). Generated by `npm run docs` from the sources.",
    "",
    "| package | modules |",
    "| --- | --- |",
    ...pkgs.map(
      (p) =>
        `| [${p.name}](${p.name.replace("@ugent/", "")}.md) | ${p.modules.filter((m) => m.entries.length > 0).length} |`
    ),
    ""
  ].join("\n")

/** The files of the reference, by path relative to `docs/api/`. */
export const reference = (): Map<string, string> => {
  const pkgs = packages.map(modulesOf)
  const files = new Map<string, string>([["README.md", index(pkgs)]])
  for (const p of pkgs) files.set(`${p.name.replace("@ugent/", "")}.md`, page(p))
  return files
}

if (import.meta.main) {
  mkdirSync(out, { recursive: true })
  for (const [name, text] of reference()) writeFileSync(join(out, name), text)
  console.log(`wrote the API reference to ${relative(root, out)}/ (start at README.md)`)
}
