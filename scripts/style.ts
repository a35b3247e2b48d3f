/**
 * Formats and lints the repository with Biome, through its WebAssembly build.
 *
 * `node scripts/style.ts` checks (exit 1 on a formatting difference or a lint
 * error); `node scripts/style.ts --write` formats the files in place. The
 * WebAssembly build is used instead of Biome's CLI because the CLI's
 * per-platform binaries are not all on the package registry these machines
 * use, and `npm ci` refuses a lock file without them.
 */
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Biome, type Configuration } from "@biomejs/js-api/nodejs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const write = process.argv.includes("--write")

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: root })
  .toString("utf8")
  .split("\0")
  .filter(
    (f) => /\.(ts|mts|cts|js|mjs|json)$/.test(f) && !f.endsWith("package-lock.json") && !f.startsWith("bench/results/")
  )

const biome = new Biome()
const { projectKey } = biome.openProject(root)
biome.applyConfiguration(projectKey, JSON.parse(readFileSync(join(root, "biome.json"), "utf8")) as Configuration)

let problems = 0
for (const file of files) {
  const source = readFileSync(join(root, file), "utf8")
  const formatted = biome.formatContent(projectKey, source, { filePath: file })
  if (formatted.content !== source) {
    if (write) writeFileSync(join(root, file), formatted.content)
    else {
      problems++
      console.error(`${file}: not formatted (run npm run format)`)
    }
  }
  const linted = biome.lintContent(projectKey, write ? formatted.content : source, { filePath: file })
  const errors = linted.diagnostics.filter((d) => d.severity === "error" || d.severity === "fatal")
  if (errors.length > 0) {
    problems += errors.length
    // printDiagnostics marks links up as HTML; a terminal wants the text.
    console.error(biome.printDiagnostics(errors, { filePath: file, fileSource: source }).replace(/<[^>]+>/g, ""))
  }
}
biome.shutdown()
console.log(`style: ${files.length} files checked, ${problems} problem(s)`)
process.exitCode = problems > 0 ? 1 : 0
