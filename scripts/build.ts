/**
 * Builds the packages for publishing: `npm run build` (everything) or
 * `node scripts/build.ts --bin` (the bundle the `ugent` binary runs,
 * `packages/agentese/dist/bin/cli.js`).
 *
 * The libraries are compiled by TypeScript's own emit (`tsc -b`, one
 * project per package): it is the only tool that writes declaration files
 * and their maps, and it keeps one JavaScript module per source module, so
 * consumers' bundlers can tree-shake. The `ugent` binary is bundled by
 * rolldown: a command must start in a fraction of a second, and loading
 * Effect's hundreds of modules one by one (its barrel alone takes ~0.4 s)
 * would not; a bundle keeps only what the CLI reaches, and splits what is
 * imported lazily (a command's projection, PostgreSQL, the HTTP server) into
 * chunks loaded on first use.
 */
import { execFileSync } from "node:child_process"
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const root = fileURLToPath(new URL("..", import.meta.url))
const agentese = join(root, "packages", "agentese")

/**
 * Packages the binary leaves to Node's resolver: node built-ins, and the
 * optional or heavy packages that do not depend on Effect (so the bundle's
 * one copy of Effect stays the only one), each imported only by the feature
 * that needs it. `@ugent/agentese` declares them itself (isomorphic-git a
 * dependency, redis an optional peer), so they resolve from the bundle under
 * any package manager's layout. The MCP SDK client is loaded only by a mount (`--mount`), and is a dependency.
 */
const external = [/^node:/, /^redis$/, /^@redis\//, /^isomorphic-git(\/.*)?$/, /^@modelcontextprotocol\/sdk(\/.*)?$/]

/** The package directory and name of a bundled module under node_modules, if it is one. */
const packageOf = (id: string): { readonly dir: string; readonly name: string } | undefined => {
  const m = /^(.*[\\/]node_modules[\\/])((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(id)
  return m === null ? undefined : { dir: m[1]! + m[2]!, name: m[2]!.replace(/\\/g, "/") }
}

/**
 * The notices of the third-party code inside the bundle: each package's
 * name, version, license and license text, as their licenses ask of a
 * redistribution.
 */
const notices = (moduleIds: Iterable<string>): string => {
  // By directory: two versions of one package (one nested) are two entries.
  const packages = new Map<string, string>()
  for (const id of moduleIds) {
    const found = packageOf(id)
    if (found !== undefined) packages.set(found.dir, found.name)
  }
  const sections = [...packages]
    .sort(([, a], [, b]) => a.localeCompare(b))
    .map(([dir, name]) => {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        version: string
        license?: string
      }
      const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f))
      const text =
        file === undefined ? "(no license file in the package)" : readFileSync(join(dir, file), "utf8").trim()
      return `${name}@${manifest.version} (${manifest.license ?? "see below"})\n\n${text}`
    })
  return `The ugent binary (dist/bin) bundles the following packages.\n\n${sections.join(`\n\n${"-".repeat(72)}\n\n`)}\n`
}

export const bundleBin = async (): Promise<void> => {
  const out = join(agentese, "dist", "bin")
  rmSync(out, { recursive: true, force: true })
  const result = await build({
    input: {
      cli: join(agentese, "src", "projections", "Cli.ts"),
      // web.fetch converts pages in a worker it finds beside its own module (a chunk): emitted there.
      markdownWorker: join(root, "packages", "tools", "src", "internal", "web", "markdownWorker.ts")
    },
    platform: "node",
    external,
    resolve: { conditionNames: ["@ugent/source", "import", "node", "default"] },
    logLevel: "warn",
    output: {
      dir: out,
      format: "esm",
      sourcemap: true,
      // Less to read and keep in memory at start-up; function and class names stay for stack traces and `.name`.
      minify: { compress: { keepNames: { function: true, class: true } }, mangle: { keepNames: true } },
      entryFileNames: (chunk) => (chunk.name === "markdownWorker" ? "chunks/[name].js" : "[name].js"),
      chunkFileNames: "chunks/[name]-[hash].js"
    },
    // The entry's exports (`main`) are what bin/ugent.js calls.
    preserveEntrySignatures: "exports-only"
  })
  const moduleIds = result.output.flatMap((o) => (o.type === "chunk" ? o.moduleIds : []))
  writeFileSync(join(out, "THIRD-PARTY-NOTICES.txt"), notices(moduleIds))
}

if (import.meta.main) {
  if (!process.argv.includes("--bin")) {
    execFileSync(
      process.execPath,
      [join(root, "node_modules", "typescript", "bin", "tsc"), "-b", "tsconfig.build.json"],
      {
        cwd: root,
        stdio: "inherit"
      }
    )
  }
  await bundleBin()
}
