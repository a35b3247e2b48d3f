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
import { rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const root = fileURLToPath(new URL("..", import.meta.url))
const agentese = join(root, "packages", "agentese")

/**
 * Packages the binary leaves to Node's resolver: node built-ins, and the
 * optional or heavy packages that do not depend on Effect (so the bundle's
 * one copy of Effect stays the only one), each imported only by the feature
 * that needs it.
 */
const external = [/^node:/, /^redis$/, /^@redis\//, /^isomorphic-git(\/.*)?$/]

export const bundleBin = async (): Promise<void> => {
  const out = join(agentese, "dist", "bin")
  rmSync(out, { recursive: true, force: true })
  await build({
    input: { cli: join(agentese, "src", "projections", "Cli.ts") },
    platform: "node",
    external,
    resolve: { conditionNames: ["@ugent/source", "import", "node", "default"] },
    logLevel: "warn",
    output: {
      dir: out,
      format: "esm",
      sourcemap: true,
      entryFileNames: "[name].js",
      chunkFileNames: "chunks/[name]-[hash].js"
    },
    // The entry's exports (`main`) are what bin/ugent.js calls.
    preserveEntrySignatures: "exports-only"
  })
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
