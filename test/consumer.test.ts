/**
 * The packages work outside this repository, as a user installs them: every
 * workspace package is packed (its `prepack` builds it) and the tarballs are
 * installed with npm into a fresh project in the temp directory
 * (scripts/packed.ts). One install serves every check: a `.js` and a `.ts`
 * consumer run (test/consumer/, the files the README's "Use it as a library"
 * shows), the `.ts` one type-checks under `tsc` (nodenext, strict, library
 * checks on) with its deliberate error reported, the installed `ugent` runs,
 * and the official MCP SDK client connects to `ugent mcp` started with the
 * README's command line.
 *
 * Without the package registry the install cannot run: the test says so, and
 * fails in CI (CI=true) rather than pass without checking anything.
 */
import { execFile, spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Installed, installPacked, registryReachable, repository, userEnv, workspaces } from "../scripts/packed.ts"

const here = join(repository, "test", "consumer")
const readme = readFileSync(join(repository, "README.md"), "utf8")

/** The command line the README's MCP configurations run: the installed bin, with the workspace and trust level. */
const mcpCommand = (bin: string, root: string) => [bin, "mcp", "--root", root, "--trust", "L1"] as const

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string): Promise<Run> =>
  new Promise((resolve) => {
    execFile(command, args, { cwd, env: userEnv(), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

const reachable = await registryReachable()
const inCi = process.env.CI === "true" || process.env.CI === "1"

if (!reachable && inCi) {
  describe("consumer", () => {
    it("needs the package registry to install the packed packages", () => {
      expect.fail("the npm registry is unreachable: the consumer test cannot install the packed packages")
    })
  })
}

describe.skipIf(!reachable)(
  reachable
    ? "consumer"
    : "consumer (skipped: the npm registry is unreachable, so the packed packages cannot be installed)",
  () => {
    let installed: Installed
    let project: string
    let work: string

    beforeAll(async () => {
      installed = await installPacked({ extra: ["@types/node@^24"] })
      project = installed.dir
      for (const file of ["pipeline.js", "pipeline.ts", "tsconfig.json"])
        copyFileSync(join(here, file), join(project, file))
      work = mkdtempSync(join(tmpdir(), "ugent-consumer-work-"))
      writeFileSync(join(work, "a.txt"), "alpha\nbeta\n")
    }, 600_000)

    afterAll(() => {
      installed?.remove()
      if (work !== undefined) rmSync(work, { recursive: true, force: true })
    })

    it("each tarball has its license, built JavaScript with declarations and maps, and no tests", () => {
      expect(installed.tarballs).toHaveLength(workspaces.length)
      for (const name of ["core", "tools", "wrappers", "agentese", "laws"]) {
        const dir = join(project, "node_modules", "@ugent", name)
        expect(readFileSync(join(dir, "LICENSE"), "utf8")).toBe(readFileSync(join(repository, "LICENSE"), "utf8"))
        for (const file of ["dist/index.js", "dist/index.js.map", "dist/index.d.ts", "dist/index.d.ts.map"]) {
          expect(existsSync(join(dir, file)), `${name}/${file}`).toBe(true)
        }
        expect(existsSync(join(dir, "test")), `${name} ships its tests`).toBe(false)
      }
      // The binary bundles third-party code, and ships its notices.
      const notices = readFileSync(
        join(project, "node_modules/@ugent/agentese/dist/bin/THIRD-PARTY-NOTICES.txt"),
        "utf8"
      )
      expect(notices).toMatch(/^effect@4\.\S+ \(MIT\)$/m)
    })

    it("public modules can be imported by their own paths, internal ones cannot", async () => {
      const specifiers = [
        "@ugent/core/Trust",
        "@ugent/tools/file/Read",
        "@ugent/core/internal/level",
        "@ugent/tools/git/internal/iso",
        "@ugent/wrappers/internal/optional"
      ]
      const script = `for (const s of ${JSON.stringify(specifiers)}) { try { await import(s); console.log(s, "ok") } catch (e) { console.log(s, e.code) } }`
      const result = await run(process.execPath, ["--input-type=module", "-e", script], project)
      expect(result.stdout.trim().split("\n")).toEqual([
        "@ugent/core/Trust ok",
        "@ugent/tools/file/Read ok",
        "@ugent/core/internal/level ERR_PACKAGE_PATH_NOT_EXPORTED",
        "@ugent/tools/git/internal/iso ERR_PACKAGE_PATH_NOT_EXPORTED",
        "@ugent/wrappers/internal/optional ERR_PACKAGE_PATH_NOT_EXPORTED"
      ])
    })

    it("importing the five packages, or running ugent list, loads neither PostgreSQL, Redis, isomorphic-git nor the web client", async () => {
      // A resolve hook that refuses the optional packages: any import of one fails the run. The command line also
      // refuses the modules only web.fetch needs (its HTTPS client, the worker that converts large pages); the
      // library may load them, since its barrel exports the HTTP projection.
      const refusing = (names: ReadonlyArray<string>) =>
        [
          'import { registerHooks } from "node:module"',
          `const refused = ${JSON.stringify(names)}`,
          "registerHooks({ resolve: (specifier, context, next) => {",
          "  if (refused.includes(specifier)) throw new Error(`loaded ${specifier}`)",
          "  return next(specifier, context)",
          "} })"
        ].join("\n")
      const optional = ["redis", "@effect/sql-pg", "isomorphic-git", "@effect/platform-node/NodeRedis"]
      writeFileSync(join(project, "refuse.mjs"), refusing(optional))
      writeFileSync(join(project, "refuse-cli.mjs"), refusing([...optional, "node:https", "node:worker_threads"]))
      const imports = ["core", "tools", "wrappers", "agentese", "laws"]
        .map((p) => `await import("@ugent/${p}")`)
        .join("; ")
      const library = await run(
        process.execPath,
        ["--import", "./refuse.mjs", "--input-type=module", "-e", imports],
        project
      )
      expect(library.code, library.stderr).toBe(0)
      const cli = await run(
        process.execPath,
        ["--import", join(project, "refuse-cli.mjs"), installed.bin, "list", "--root", work],
        work
      )
      expect(cli.code, cli.stderr).toBe(0)
      expect(cli.stdout).toContain("world.tools.file.read")
    })

    it("the optional PostgreSQL driver is not installed with the packages, and a store that needs it says which package to install", async () => {
      expect(existsSync(join(project, "node_modules", "@effect", "sql-pg"))).toBe(false)
      writeFileSync(
        join(project, "missing.js"),
        [
          'import { Stores } from "@ugent/wrappers"',
          'import { Effect, Layer } from "effect"',
          'const layer = Stores.layerPg({ url: "postgres://127.0.0.1:1/none" })',
          "const error = await Effect.runPromise(Effect.flip(Effect.scoped(Layer.build(layer))))",
          "console.log(error.message)"
        ].join("\n")
      )
      const result = await run(process.execPath, ["missing.js"], project)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain(
        "needs the optional package @effect/sql-pg: install it with npm install @effect/sql-pg"
      )
    })

    it("a .js file imports all five packages and runs a composed pipeline", async () => {
      const result = await run(process.execPath, ["pipeline.js"], project)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toBe("laws hold: true\npipeline: { path: 'notes.md', lines: 2 }\nroad: 2\n")
    })

    it("the project is made as the README says (npm init -y, npm pkg set type=module), and the test runners stay out", () => {
      const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8")) as Record<string, unknown>
      expect(manifest.type).toBe("module")
      // @ugent/laws' vitest and @effect/vitest are optional peers: an install does not bring them (nor vite).
      for (const name of ["vitest", "@effect/vitest", "vite"]) {
        expect(existsSync(join(project, "node_modules", name)), name).toBe(false)
      }
      const laws = JSON.parse(readFileSync(join(project, "node_modules/@ugent/laws/package.json"), "utf8")) as {
        peerDependenciesMeta: Record<string, { optional: boolean }>
      }
      expect(laws.peerDependenciesMeta.vitest?.optional).toBe(true)
      expect(laws.peerDependenciesMeta["@effect/vitest"]?.optional).toBe(true)
    })

    it("Laws without vitest says what to install, and RuleSet.check needs nothing more", async () => {
      writeFileSync(
        join(project, "laws.js"),
        [
          'import { Laws } from "@ugent/laws"',
          "try { Laws.checkAll('x', undefined) } catch (e) { console.log(e.message) }"
        ].join("\n")
      )
      const result = await run(process.execPath, ["laws.js"], project)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain("npm install -D vitest @effect/vitest, or check them with RuleSet.check")
    })

    it("a .ts file runs the same (Node strips its types), and tsc (nodenext, strict) accepts it and reports its deliberate error", async () => {
      const ran = await run(process.execPath, ["pipeline.ts"], project)
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stdout).toBe("laws hold: true\npipeline: { path: 'notes.md', lines: 2 }\nroad: 2\n")

      // One tsc run over the file and a copy without its @ts-expect-error: the copy's deliberate
      // mistake must be the one error reported, at that line (so the file itself compiles).
      const source = readFileSync(join(project, "pipeline.ts"), "utf8").split("\n")
      const directive = source.findIndex((line) => line.startsWith("// @ts-expect-error"))
      expect(directive).toBeGreaterThan(0)
      writeFileSync(join(project, "unchecked.ts"), source.filter((_, i) => i !== directive).join("\n"))
      const tsc = join(repository, "node_modules", "typescript", "bin", "tsc")
      const checked = await run(process.execPath, [tsc, "-p", "tsconfig.json", "--pretty", "false"], project)
      const errors = checked.stdout.split("\n").filter((line) => /error TS\d+/.test(line))
      expect(errors, checked.stdout).toHaveLength(1)
      expect(errors[0]).toMatch(new RegExp(`^unchecked\\.ts\\(${directive + 1},\\d+\\): error TS2345`))
    }, 120_000)

    it("the installed ugent prints its help, its version, and invokes a path on a workspace", async () => {
      const help = await run(installed.bin, ["--help"], work)
      expect(help.code, help.stderr).toBe(0)
      for (const command of ["list", "describe", "invoke", "exec", "serve", "mcp"])
        expect(help.stdout).toContain(command)

      const version = await run(installed.bin, ["--version"], work)
      const manifest = JSON.parse(readFileSync(join(repository, "packages", "agentese", "package.json"), "utf8"))
      expect(version.stdout).toBe(`ugent v${manifest.version}\n`)

      const read = await run(
        installed.bin,
        ["invoke", "world.tools.file.read", "--input", '{"path":"a.txt"}', "--root", work, "--json"],
        work
      )
      expect(read.code, read.stderr).toBe(0)
      const outcome = JSON.parse(read.stdout) as { ok: boolean; result: { content: string } }
      expect(outcome.ok).toBe(true)
      expect(outcome.result.content).toBe("1\talpha\n2\tbeta")
    })

    it("the installed ugent mounts an MCP server with the SDK it depends on (the bundle leaves the SDK to the install)", async () => {
      const everything = join(repository, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
      const sum = await run(
        installed.bin,
        [
          ...["invoke", "world.mcp.every.get-sum", "--input", '{"a":2,"b":3}', "--root", work, "--json"],
          ...["--mount", `every=${process.execPath} ${everything}`]
        ],
        work
      )
      expect(sum.code, sum.stderr).toBe(0)
      const outcome = JSON.parse(sum.stdout) as { ok: boolean; result: { content: Array<{ text: string }> } }
      expect(outcome.result.content[0]?.text).toBe("The sum of 2 and 3 is 5.")
      expect(existsSync(join(project, "node_modules/@modelcontextprotocol/sdk/package.json"))).toBe(true)
    })

    it("the installed ugent serves a family from the project's own module (built with the project's effect, run by the bundle)", async () => {
      writeFileSync(
        join(project, "greet.ts"),
        [
          'import { Family, Tool } from "@ugent/core"',
          'import { Workspace } from "@ugent/tools"',
          'import { Context, Effect, Layer, Schema } from "effect"',
          'class Greeting extends Context.Service<Greeting, string>()("consumer/Greeting") {}',
          "const hello = Tool.make({",
          '  name: "greet.hello",',
          '  description: "Greets someone from the workspace.",',
          "  input: Schema.Struct({ who: Schema.String }),",
          "  output: Schema.Struct({ text: Schema.String }),",
          "  run: ({ who }) =>",
          "    Effect.gen(function* () {",
          "      const greeting = yield* Greeting",
          "      const ws = yield* Workspace.Workspace",
          "      return { text: `${greeting}, ${who}, in ${ws.root}` }",
          "    })",
          "})",
          'export default Family.make({ name: "greet", prefix: "self.tools", tools: { "greet.hello": hello }, layer: Layer.succeed(Greeting, "hello") })'
        ].join("\n")
      )
      const greeted = await run(
        installed.bin,
        [
          "invoke",
          "self.tools.greet.hello",
          "--family",
          join(project, "greet.ts"),
          "--input",
          '{"who":"ann"}',
          "--root",
          work,
          "--stores",
          "memory",
          "--json"
        ],
        work
      )
      expect(greeted.code, greeted.stdout + greeted.stderr).toBe(0)
      expect((JSON.parse(greeted.stdout) as { result: unknown }).result).toEqual({ text: `hello, ann, in ${work}` })
    })

    it("the installed ugent converts a large page (over 128 KB) to Markdown in its worker", async () => {
      // A page of about 200 KB from a loopback server, which a recipe allows.
      const paragraphs = Array.from(
        { length: 3000 },
        (_, i) => `<p>Paragraph ${i} of the page, with some more text to make it long enough.</p>`
      )
      const page = `<html><head><title>Big</title></head><body><h1>Big page</h1>${paragraphs.join("")}</body></html>`
      const server = createServer((_, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        res.end(page)
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      try {
        const port = (server.address() as AddressInfo).port
        writeFileSync(join(work, "web.json"), JSON.stringify({ allowHosts: [`127.0.0.1:${port}`] }))
        const input = JSON.stringify({ url: `http://127.0.0.1:${port}/big`, maxLength: 2000 })
        const fetched = await run(
          installed.bin,
          ["invoke", "world.tools.web.fetch", "--input", input, "--recipe", "web.json", "--root", work, "--json"],
          work
        )
        expect(fetched.code, fetched.stderr).toBe(0)
        const outcome = JSON.parse(fetched.stdout) as { ok: boolean; result: { content: string; notice?: string } }
        expect(outcome.ok, fetched.stdout).toBe(true)
        expect(outcome.result.notice ?? "").not.toContain("could not be converted")
        expect(outcome.result.content).toMatch(/^# Big page\n\nParagraph 0 of the page/)
        expect(page.length).toBeGreaterThan(128 * 1024)
      } finally {
        server.close()
      }
    })

    it("an old Node on the PATH gets one line naming the Node version needed", async (ctx) => {
      // The first `node` on the user's PATH (without the repository's Node put first).
      const path = (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "node"))
      const found = path.find((file) => existsSync(file) && !file.startsWith(repository))
      const version =
        found === undefined ? undefined : spawnSync(found, ["--version"], { encoding: "utf8" }).stdout.trim()
      const [major = 0, minor = 0] = (version ?? "v0.0").slice(1).split(".").map(Number)
      if (found === undefined || major > 22 || (major === 22 && minor >= 19)) {
        ctx.skip(`no Node older than 22.19 on the PATH (found ${found ?? "none"} ${version ?? ""})`)
        return
      }
      const line = `ugent: needs Node.js 22.19 or newer, and this is Node.js ${version!.slice(1)}; install a newer Node (https://nodejs.org) and run it again.\n`
      const result = await run(found, [installed.bin, "list"], work)
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(line)
      // The library says the same, in one line, instead of ERR_UNKNOWN_BUILTIN_MODULE node:sqlite.
      const library = await run(found, ["pipeline.js"], project)
      expect(library.code).toBe(1)
      expect(library.stderr).toBe(line)
    })

    it("the MCP SDK client connects to ugent mcp started with the README's command line, and calls a tool", async () => {
      // Started from another directory, as a client does: nothing is resolved from the project or a registry.
      const [command, ...args] = mcpCommand(installed.bin, work)
      const transport = new StdioClientTransport({
        command,
        args,
        cwd: work,
        env: userEnv() as Record<string, string>,
        stderr: "pipe"
      })
      const client = new Client({ name: "ugent-consumer-test", version: "0.0.0" })
      await client.connect(transport)
      try {
        const { tools } = await client.listTools()
        expect(tools.map((t) => t.name)).toContain("world_tools_file_read")
        const result = await client.callTool({ name: "world_tools_file_read", arguments: { path: "a.txt" } })
        expect(result.isError ?? false).toBe(false)
        expect((result.structuredContent as { content: string }).content).toBe("1\talpha\n2\tbeta")
      } finally {
        await client.close()
      }
    }, 60_000)

    it("the README shows exactly what this test runs", () => {
      for (const file of ["pipeline.js", "pipeline.ts", "tsconfig.json"]) {
        expect(readme, `README shows test/consumer/${file}`).toContain(readFileSync(join(here, file), "utf8"))
      }
      const [command, ...args] = mcpCommand("/path/to/my-app/node_modules/.bin/ugent", "/path/to/project")
      expect(readme).toContain(`claude mcp add ugent -- ${[command, ...args].join(" ")}`)
      expect(readme).toContain(`"command": "${command}"`)
      expect(readme).toContain(`"args": [${args.map((a) => `"${a}"`).join(", ")}]`)
      // The install route this test takes (scripts/packed.ts): pack every workspace, a project made with npm
      // init and type=module, the tarballs and effect installed.
      expect(readme).toContain(
        `npm pack ${workspaces.map((w) => `-w ${w}`).join(" ")} --pack-destination ../ugent-packs`
      )
      expect(readme).toContain("npm init -y && npm pkg set type=module")
      expect(readme).toContain("npm install ../ugent-packs/*.tgz effect")
      // Said first: the packages are not in the registry yet, and no configuration starts them from it.
      expect(readme.indexOf("Not in the npm registry yet")).toBeLessThan(readme.indexOf("## "))
      expect(readme).not.toMatch(/"args": \["-y", "@ugent\/agentese"/)
    })
  }
)
