/**
 * What kind of project a folder holds, from the manifests at its top level,
 * and the manifest read into name, version, dependencies and scripts. The
 * parsers are small and tolerant on purpose: a report reads a manifest to
 * describe it, never to build it, so a section it does not understand is
 * skipped rather than refused.
 *
 * @internal
 */

/** A project type and the top-level file that says so. */
export interface Marker {
  readonly type: string
  readonly file: string
}

/** The manifest's facts; `null` where the manifest does not say. */
export interface ManifestFacts {
  readonly name: string | null
  readonly version: string | null
  readonly description: string | null
  readonly dependencies: ReadonlyArray<string>
  readonly devDependencies: ReadonlyArray<string>
  readonly scripts: ReadonlyArray<{ readonly name: string; readonly command: string }>
  readonly workspaces: ReadonlyArray<string>
}

type Parser = (text: string) => ManifestFacts | undefined

const exact: ReadonlyArray<readonly [file: string, type: string]> = [
  ["package.json", "node"],
  ["deno.json", "deno"],
  ["deno.jsonc", "deno"],
  ["Cargo.toml", "rust"],
  ["pyproject.toml", "python"],
  ["setup.py", "python"],
  ["setup.cfg", "python"],
  ["requirements.txt", "python"],
  ["Pipfile", "python"],
  ["go.mod", "go"],
  ["pom.xml", "java (maven)"],
  ["build.gradle", "jvm (gradle)"],
  ["build.gradle.kts", "jvm (gradle)"],
  ["build.sbt", "scala"],
  ["Gemfile", "ruby"],
  ["composer.json", "php"],
  ["mix.exs", "elixir"],
  ["pubspec.yaml", "dart"],
  ["Package.swift", "swift"],
  ["stack.yaml", "haskell"],
  ["CMakeLists.txt", "c/c++ (cmake)"],
  ["meson.build", "c/c++ (meson)"],
  ["Makefile", "make"]
]

const bySuffix: ReadonlyArray<readonly [suffix: string, type: string]> = [
  [".csproj", ".net"],
  [".fsproj", ".net"],
  [".sln", ".net"],
  [".cabal", "haskell"],
  [".gemspec", "ruby"],
  [".nimble", "nim"]
]

/**
 * The project types a folder's top-level names show, in the order of the
 * table above (the first is the primary one).
 */
export const markers = (names: ReadonlyArray<string>): ReadonlyArray<Marker> => {
  const present = new Set(names)
  const out: Array<Marker> = []
  for (const [file, type] of exact) if (present.has(file)) out.push({ type, file })
  for (const name of [...names].sort()) {
    const hit = bySuffix.find(([suffix]) => name.endsWith(suffix) && name.length > suffix.length)
    if (hit !== undefined) out.push({ type: hit[1], file: name })
  }
  return out
}

const strings = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []

const keys = (value: unknown): ReadonlyArray<string> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.keys(value).sort() : []

const text = (value: unknown): string | null => (typeof value === "string" && value.trim() !== "" ? value : null)

const json = (source: string): Record<string, unknown> | undefined => {
  try {
    // deno.jsonc allows comments: drop whole-line ones, which is what such files usually have.
    const parsed = JSON.parse(source.replace(/^\s*\/\/.*$/gm, "")) as unknown
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

const packageJson: Parser = (source) => {
  const m = json(source)
  if (m === undefined) return undefined
  const scripts = m.scripts
  const workspaces = Array.isArray(m.workspaces)
    ? strings(m.workspaces)
    : strings((m.workspaces as { packages?: unknown } | undefined)?.packages)
  return {
    name: text(m.name),
    version: text(m.version),
    description: text(m.description),
    dependencies: keys(m.dependencies),
    devDependencies: keys(m.devDependencies),
    scripts: keys(scripts).map((name) => ({
      name,
      command: String((scripts as Record<string, unknown>)[name])
    })),
    workspaces
  }
}

const denoJson: Parser = (source) => {
  const m = json(source)
  if (m === undefined) return undefined
  const tasks = m.tasks
  return {
    name: text(m.name),
    version: text(m.version),
    description: null,
    dependencies: keys(m.imports),
    devDependencies: [],
    scripts: keys(tasks).map((name) => ({ name, command: String((tasks as Record<string, unknown>)[name]) })),
    workspaces: strings(m.workspace)
  }
}

const composerJson: Parser = (source) => {
  const m = json(source)
  if (m === undefined) return undefined
  const scripts = m.scripts
  return {
    name: text(m.name),
    version: text(m.version),
    description: text(m.description),
    dependencies: keys(m.require),
    devDependencies: keys(m["require-dev"]),
    scripts: keys(scripts).map((name) => ({
      name,
      command: JSON.stringify((scripts as Record<string, unknown>)[name])
    })),
    workspaces: []
  }
}

/**
 * A TOML file as tables of raw values: enough for the keys a manifest
 * report needs (strings, arrays of strings, and the keys of a table).
 * Multi-line arrays are joined; inline tables are kept as raw text.
 */
const toml = (source: string): Map<string, Map<string, string>> => {
  const tables = new Map<string, Map<string, string>>([["", new Map()]])
  let current = tables.get("")!
  const lines = source.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\s+#.*$/, "").trim()
    if (line === "" || line.startsWith("#")) continue
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?$/.exec(line)
    if (header !== null) {
      const name = header[1]!.replace(/["']/g, "")
      current = tables.get(name) ?? new Map()
      tables.set(name, current)
      continue
    }
    const eq = line.indexOf("=")
    if (eq <= 0) continue
    const key = line.slice(0, eq).trim().replace(/["']/g, "")
    let value = line.slice(eq + 1).trim()
    // An array or inline table over several lines: read on until the brackets balance.
    const open = (s: string) => (s.match(/[[{]/g)?.length ?? 0) - (s.match(/[\]}]/g)?.length ?? 0)
    while (open(value) > 0 && i + 1 < lines.length) value += ` ${lines[++i]!.replace(/\s+#.*$/, "").trim()}`
    current.set(key, value)
  }
  return tables
}

const tomlString = (raw: string | undefined): string | null => {
  if (raw === undefined) return null
  const m = /^"((?:[^"\\]|\\.)*)"|^'([^']*)'/.exec(raw)
  return m === null ? null : (m[1] ?? m[2] ?? null)
}

const tomlStrings = (raw: string | undefined): ReadonlyArray<string> => {
  if (raw === undefined || !raw.startsWith("[")) return []
  return [...raw.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2] ?? "")
}

/** The package name of a PEP 508 requirement (`requests>=2; python_version>"3"` is `requests`). */
const requirementName = (req: string): string => /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(req)?.[1] ?? req.trim()

const tableKeys = (tables: Map<string, Map<string, string>>, name: string): ReadonlyArray<string> =>
  [...(tables.get(name)?.keys() ?? [])].sort()

const cargoToml: Parser = (source) => {
  const t = toml(source)
  const pkg = t.get("package")
  const workspace = t.get("workspace")
  if (pkg === undefined && workspace === undefined) return undefined
  return {
    name: tomlString(pkg?.get("name")),
    version: tomlString(pkg?.get("version")),
    description: tomlString(pkg?.get("description")),
    dependencies: tableKeys(t, "dependencies"),
    devDependencies: tableKeys(t, "dev-dependencies"),
    scripts: [],
    workspaces: tomlStrings(workspace?.get("members"))
  }
}

const pyprojectToml: Parser = (source) => {
  const t = toml(source)
  const project = t.get("project")
  const poetry = t.get("tool.poetry")
  if (project === undefined && poetry === undefined) return undefined
  const poetryDev = [
    ...tableKeys(t, "tool.poetry.dev-dependencies"),
    ...tableKeys(t, "tool.poetry.group.dev.dependencies")
  ]
  const optional = t.get("project.optional-dependencies")
  const scripts = t.get("project.scripts") ?? t.get("tool.poetry.scripts")
  return {
    name: tomlString(project?.get("name") ?? poetry?.get("name")),
    version: tomlString(project?.get("version") ?? poetry?.get("version")),
    description: tomlString(project?.get("description") ?? poetry?.get("description")),
    dependencies:
      project !== undefined
        ? tomlStrings(project.get("dependencies")).map(requirementName)
        : tableKeys(t, "tool.poetry.dependencies").filter((k) => k !== "python"),
    devDependencies: [
      ...new Set([
        ...poetryDev,
        ...[...(optional?.values() ?? [])].flatMap((raw) => tomlStrings(raw).map(requirementName))
      ])
    ].sort(),
    scripts: [...(scripts?.entries() ?? [])].map(([name, raw]) => ({ name, command: tomlString(raw) ?? raw })),
    workspaces: []
  }
}

const goMod: Parser = (source) => {
  const module = /^module\s+(\S+)/m.exec(source)?.[1]
  if (module === undefined) return undefined
  const deps: Array<string> = []
  const indirect: Array<string> = []
  let inBlock = false
  for (const raw of source.split(/\r?\n/)) {
    const line = raw.trim()
    if (/^require\s*\($/.test(line)) {
      inBlock = true
      continue
    }
    if (inBlock && line === ")") {
      inBlock = false
      continue
    }
    const m = inBlock ? /^(\S+)\s+\S+/.exec(line) : /^require\s+(\S+)\s+\S+/.exec(line)
    if (m !== null) (line.includes("// indirect") ? indirect : deps).push(m[1]!)
  }
  const goVersion = /^go\s+(\S+)/m.exec(source)?.[1]
  return {
    name: module,
    version: goVersion === undefined ? null : `go ${goVersion}`,
    description: null,
    dependencies: deps.sort(),
    devDependencies: indirect.sort(),
    scripts: [],
    workspaces: []
  }
}

const requirementsTxt: Parser = (source) => ({
  name: null,
  version: null,
  description: null,
  dependencies: source
    .split(/\r?\n/)
    .map((l) => l.replace(/#.*$/, "").trim())
    .filter((l) => l !== "" && !l.startsWith("-"))
    .map(requirementName)
    .sort(),
  devDependencies: [],
  scripts: [],
  workspaces: []
})

const parsers: Readonly<Record<string, Parser>> = {
  "package.json": packageJson,
  "deno.json": denoJson,
  "deno.jsonc": denoJson,
  "composer.json": composerJson,
  "Cargo.toml": cargoToml,
  "pyproject.toml": pyprojectToml,
  "go.mod": goMod,
  "requirements.txt": requirementsTxt
}

/** The first marker whose manifest this module can read: the one the report reads. */
export const readable = (found: ReadonlyArray<Marker>): Marker | undefined =>
  found.find((m) => parsers[m.file] !== undefined)

/** Reads a manifest's text; `undefined` when it does not parse. */
export const parse = (file: string, source: string): ManifestFacts | undefined => parsers[file]?.(source)

/** How a project of a type runs its tests, when the manifest says or the type implies it. */
export const testCommand = (type: string | undefined, facts: ManifestFacts | undefined): string | undefined => {
  const script = facts?.scripts.find((s) => s.name === "test")
  if (type === "node") return script !== undefined ? "npm test" : undefined
  if (type === "deno") return script !== undefined ? "deno task test" : "deno test"
  if (type === "rust") return "cargo test"
  if (type === "go") return "go test ./..."
  if (type === "python") return "pytest"
  if (type === "elixir") return "mix test"
  if (type === "dart") return "dart test"
  if (type === "swift") return "swift test"
  if (type === "java (maven)") return "mvn test"
  if (type === "jvm (gradle)") return "gradle test"
  if (type === ".net") return "dotnet test"
  return undefined
}

/** How a project of a type installs its dependencies. */
export const installCommand = (type: string | undefined): string | undefined => {
  switch (type) {
    case "node":
      return "npm install"
    case "rust":
      return "cargo build"
    case "python":
      return "pip install -e ."
    case "go":
      return "go mod download"
    case "ruby":
      return "bundle install"
    case "php":
      return "composer install"
    case "elixir":
      return "mix deps.get"
    case "dart":
      return "dart pub get"
    default:
      return undefined
  }
}
