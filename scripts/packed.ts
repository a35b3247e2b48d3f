/**
 * The packages as a user gets them: `npm pack` of every workspace package
 * (each `prepack` builds it), installed with the npm client into a fresh
 * project outside the repository. Shared by the consumer test
 * (test/consumer.test.ts) and the startup benchmark (bench/startup.bench.ts).
 *
 * Children run with the environment of a user's shell: without the
 * `@ugent/source` condition the repository's scripts and tests set (it would
 * point the installed packages at their TypeScript sources), and with the
 * repository's Node (24) first on the PATH, so the installed `ugent` (a
 * `#!/usr/bin/env node` script) runs on it.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const repository = fileURLToPath(new URL("..", import.meta.url))

/** The workspace packages, in the order they are packed. */
export const workspaces = ["packages/core", "packages/tools", "packages/wrappers", "packages/agentese", "laws"] as const

/** The environment of a user's shell: no repository conditions, this Node first on the PATH. */
export const userEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  const options = (env.NODE_OPTIONS ?? "").replace(/--conditions[= ]@ugent\/source/g, "").trim()
  if (options === "") delete env.NODE_OPTIONS
  else env.NODE_OPTIONS = options
  for (const key of Object.keys(env)) if (key.startsWith("npm_")) delete env[key]
  env.PATH = [dirname(process.execPath), env.PATH ?? ""].join(delimiter)
  return env
}

/** The npm client's script, run by this Node (so the PATH's Node does not matter). */
const npmCli = (): string => {
  const fromEnv = process.env.npm_execpath
  if (fromEnv !== undefined && /npm-cli\.c?js$/.test(fromEnv)) return fromEnv
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "npm")
    if (existsSync(candidate)) return realpathSync(candidate)
  }
  throw new Error("npm is not on the PATH")
}

export interface Run {
  readonly stdout: string
  readonly stderr: string
}

/** Runs `npm args…` in `cwd`; fails with npm's stderr. */
export const npm = (args: ReadonlyArray<string>, cwd: string): Promise<Run> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [npmCli(), ...args],
      { cwd, env: userEnv(), maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) reject(Object.assign(new Error(`npm ${args.join(" ")} failed:\n${stderr}`), { stderr }))
        else resolve({ stdout, stderr })
      }
    )
  })

/** Whether the package registry answers (`npm ping`). */
export const registryReachable = (): Promise<boolean> =>
  npm(["ping", "--fetch-timeout=5000", "--fetch-retries=0"], repository).then(
    () => true,
    () => false
  )

/** An install of the packed packages. */
export interface Installed {
  /** The project directory (outside the repository). */
  readonly dir: string
  /** The tarballs, one per workspace package. */
  readonly tarballs: ReadonlyArray<string>
  /** The installed `ugent` binary (`node_modules/.bin/ugent`). */
  readonly bin: string
  /** Removes the project and the tarballs. */
  readonly remove: () => void
}

/**
 * Packs every workspace package and installs the tarballs, with `effect` and
 * any `extra` packages, into a new project in the temp directory.
 */
export const installPacked = async (options: { readonly extra?: ReadonlyArray<string> } = {}): Promise<Installed> => {
  const base = mkdtempSync(join(tmpdir(), "ugent-packed-"))
  try {
    const packs = join(base, "tarballs")
    const dir = join(base, "project")
    mkdirSync(packs)
    mkdirSync(dir)
    await npm(["pack", ...workspaces.flatMap((w) => ["-w", w]), "--pack-destination", packs, "--silent"], repository)
    const tarballs = readdirSync(packs)
      .filter((f) => f.endsWith(".tgz"))
      .map((f) => join(packs, f))
    if (tarballs.length !== workspaces.length)
      throw new Error(`expected ${workspaces.length} tarballs, got ${tarballs}`)
    // The project as the root README makes it: npm init, then ES modules (npm 11 writes "type": "commonjs").
    await npm(["init", "-y"], dir)
    await npm(["pkg", "set", "type=module"], dir)
    await npm(
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        ...tarballs,
        "effect@^4.1.0",
        ...(options.extra ?? [])
      ],
      dir
    )
    return {
      dir,
      tarballs,
      bin: join(dir, "node_modules", ".bin", "ugent"),
      remove: () => rmSync(base, { recursive: true, force: true })
    }
  } catch (error) {
    rmSync(base, { recursive: true, force: true })
    throw error
  }
}
