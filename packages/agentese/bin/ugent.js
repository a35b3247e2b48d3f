#!/usr/bin/env node
/**
 * The `ugent` binary: see `ugent --help` and the CLI reference in the
 * package README.
 *
 * Plain JavaScript that any Node can parse, so it checks the Node version
 * before loading anything: an old Node gets one line that names the version
 * needed, not a stack trace from deep inside a dependency. `ugent --version`
 * is answered here, from the package manifest. Otherwise it turns on Node's
 * module compile cache (later runs skip compiling what they load) and runs
 * the command line: the bundle `dist/bin/cli.js` in an installed package; in
 * the repository (where `tsconfig.build.json` sits beside it), the
 * TypeScript sources, every workspace package resolved to its `src/` through
 * the `@ugent/source` export condition.
 */
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `ugent: needs Node.js 22.19 or newer, and this is Node.js ${process.versions.node}; install a newer Node (https://nodejs.org) and run it again.\n`
  )
  process.exit(1)
}

const { existsSync, readFileSync } = await import("node:fs")
const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  const manifest = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"))
  process.stdout.write(`ugent v${manifest.version}\n`)
  process.exit(0)
}

// Node 22 calls node:sqlite (the default stores) experimental on every run; the CLI does not repeat it.
const emitWarning = process.emitWarning
process.emitWarning = (warning, ...rest) =>
  typeof warning === "string" && warning.startsWith("SQLite is an experimental feature")
    ? undefined
    : emitWarning.call(process, warning, ...rest)

const nodeModule = await import("node:module")
nodeModule.enableCompileCache?.()
const inRepository = existsSync(new URL("../tsconfig.build.json", import.meta.url))
if (inRepository) {
  nodeModule.registerHooks({
    resolve: (specifier, context, next) =>
      next(specifier, { ...context, conditions: ["@ugent/source", ...context.conditions] })
  })
}
const cli = inRepository ? await import("../src/projections/Cli.ts") : await import("../dist/bin/cli.js")
cli.main()
