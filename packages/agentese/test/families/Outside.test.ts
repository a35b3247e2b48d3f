/**
 * A tool family from outside the packages: a module in a project of its own
 * (a temp directory whose node_modules links the installed packages), whose
 * default export is a `Family`, served by `ugent --family <module>` and by a
 * recipe's `families` on every projection, the way a built-in family is.
 * Every way such a module can be wrong stops the command with a usage error
 * (exit 2) that names the module and what to do.
 */
import type { ChildProcess } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Families, Server, Toolkit } from "@ugent/agentese"
import { Family } from "@ugent/core"
import { Effect, Stream } from "effect"
import { bin, exited, onlyJson, repository, start, ugent, workspace } from "../cli/fixture.ts"

/** The family a user writes: a tool on its own service, one on the server's workspace, and an L1 tool. */
const greet = (name = "greet", prefix = "self.tools") => `
import { Family, Tool } from "@ugent/core"
import { Workspace } from "@ugent/tools"
import { Context, Effect, Layer, Schema } from "effect"

class Greeting extends Context.Service<Greeting, string>()("outside/Greeting") {}

const hello = Tool.make({
  name: "greet.hello",
  description: "Greets someone.",
  input: Schema.Struct({ who: Schema.String }),
  output: Schema.Struct({ text: Schema.String }),
  run: ({ who }) => Effect.map(Greeting, (greeting): { text: string } => ({ text: greeting + ", " + who }))
})

const root = Tool.make({
  name: "greet.root",
  description: "Tells the workspace root.",
  input: Schema.Struct({}),
  output: Schema.Struct({ root: Schema.String }),
  run: () => Effect.map(Workspace.Workspace, (w) => ({ root: w.root }))
})

const sign = Tool.make({
  name: "greet.sign",
  description: "Signs the guest book.",
  trust: 1,
  input: Schema.Struct({}),
  output: Schema.Struct({ signed: Schema.Boolean }),
  run: () => Effect.succeed({ signed: true })
})

export default Family.make({
  name: "${name}",
  prefix: "${prefix}",
  tools: { "greet.hello": hello, "greet.root": root, "greet.sign": sign },
  layer: Layer.succeed(Greeting, "hello")
})
`

/** A family of one tool, `<prefix>.<tool>`, with an optional layer (source text). */
const oneTool = (name: string, prefix: string, tool: string, layer?: string) => `
import { Family, Tool } from "@ugent/core"
import { Context, Effect, Layer } from "effect"
class Needed extends Context.Service<Needed, number>()("outside/Needed") {}
class Own extends Context.Service<Own, number>()("outside/Own") {}
void Effect; void Layer; void Needed; void Own
const tool = Tool.fromFunction({ name: "${tool}", f: (s: string) => s })
export default Family.make({ name: "${name}", prefix: "${prefix}", tools: { "${tool}": tool }${layer === undefined ? "" : `, layer: ${layer}`} })
`

/**
 * The project the families live in, outside packages/: its node_modules links
 * the installed @ugent packages and effect, and holds a package of its own
 * (JavaScript, exported for `import` only) to load by name.
 */
const project = (() => {
  const dir = mkdtempSync(join(tmpdir(), "ugent-outside-"))
  const modules = join(dir, "node_modules")
  mkdirSync(modules)
  symlinkSync(join(repository, "node_modules", "@ugent"), join(modules, "@ugent"), "dir")
  symlinkSync(join(repository, "node_modules", "effect"), join(modules, "effect"), "dir")
  const files: Record<string, string> = {
    "greet.ts": greet(),
    "families/greet.ts": greet(),
    "recipes/room.json": JSON.stringify({ allow: ["*"], families: ["../families/greet.ts"] }),
    "recipes/missing.json": JSON.stringify({ families: ["./nowhere.ts"] }),
    "node_modules/ugent-family-shout/package.json": JSON.stringify({
      name: "ugent-family-shout",
      type: "module",
      exports: { ".": { import: "./index.js" } }
    }),
    "node_modules/ugent-family-shout/index.js": `
import { Family, Tool } from "@ugent/core"
const upper = Tool.fromFunction({ name: "shout.upper", f: (s) => s.toUpperCase() })
export default Family.make({ name: "shout", prefix: "self.tools", tools: { "shout.upper": upper } })
`,
    "chatty.ts": `console.log("loading the chatty family")\n${oneTool("chatty", "self.tools", "chatty.echo")}`.replace(
      "f: (s: string) => s",
      'f: (s: string) => { console.log("echoing", s); return s }'
    ),
    "throws.js": `throw new Error("boom while importing")\n`,
    "named.ts": oneTool("named", "self.tools", "named.one").replace("export default", "export const family ="),
    "lookalike.js": `export default { name: "lookalike", prefix: "self.tools", tools: {} }\n`,
    "clash.ts": oneTool("clash", "world.tools", "file.read"),
    "greet-again.ts": greet("greet-again"),
    "greet-renamed.ts": greet("greet", "self.tools.other"),
    "broken.ts": oneTool(
      "broken",
      "self.tools",
      "broken.one",
      `Layer.effect(Own, Effect.fail(new Error("no database here")))`
    ),
    "needy.ts": oneTool("needy", "self.tools", "needy.one", "Layer.effect(Own, Effect.map(Needed, (n) => n))"),
    "malformed.ts": oneTool("malformed", "Self Tools", "x.y")
  }
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), content)
  }
  return dir
})()
afterAll(() => rmSync(project, { recursive: true, force: true }))

/** Runs `ugent` in the project directory on a fresh workspace. */
const inProject = (args: ReadonlyArray<string>, cwd = project) => {
  const root = workspace()
  return ugent([...args, "--root", root, "--stores", "memory"], { cwd }).then((run) => ({ ...run, root }))
}

/** The usage error of a run: exit code 2 and its one JSON line. */
const usageError = async (args: ReadonlyArray<string>, cwd?: string) => {
  const run = await inProject([...args, "--json"], cwd)
  assert.strictEqual(run.code, 2, run.stdout + run.stderr)
  const printed = onlyJson(run) as { kind: string; error: { _tag: string; message: string } }
  assert.strictEqual(printed.kind, "usage")
  assert.strictEqual(printed.error._tag, "UsageError")
  return printed.error.message
}

describe("a family from a module outside packages/", () => {
  it("ugent invoke --family serves its tools with their own service and the server's workspace", async () => {
    const hello = await inProject([
      "invoke",
      "self.tools.greet.hello",
      "--family",
      "./greet.ts",
      "-i",
      '{"who":"ann"}',
      "--json"
    ])
    assert.strictEqual(hello.code, 0, hello.stderr)
    assert.deepStrictEqual(onlyJson(hello).result, { text: "hello, ann" })
    const root = await inProject(["invoke", "self.tools.greet.root", "--family", "./greet.ts", "--json"])
    assert.strictEqual(root.code, 0, root.stderr)
    assert.deepStrictEqual(onlyJson(root).result, { root: root.root })
  })

  it("ugent list --family offers its paths beside the built-in ones, under the same trust gate", async () => {
    const paths = async (trust: string) => {
      const run = await inProject(["list", "--family", "./greet.ts", "--trust", trust, "--json"])
      assert.strictEqual(run.code, 0, run.stderr)
      return (onlyJson(run).paths as ReadonlyArray<{ path: string }>).map((p) => p.path)
    }
    const reader = await paths("L0")
    assert.includeMembers(reader, ["self.tools.greet.hello", "self.tools.greet.root", "world.tools.file.read"])
    assert.notInclude(reader, "self.tools.greet.sign")
    assert.include(await paths("L1"), "self.tools.greet.sign")
    const denied = await inProject(["invoke", "self.tools.greet.sign", "--family", "./greet.ts", "--json"])
    assert.strictEqual(denied.code, 1)
    assert.strictEqual((onlyJson(denied).error as { _tag: string })._tag, "TrustDenied")
  })

  it("ugent describe and ugent exec --family serve it too", async () => {
    const described = await inProject(["describe", "self.tools.greet.hello", "--family", "./greet.ts", "--json"])
    assert.strictEqual(described.code, 0, described.stderr)
    assert.strictEqual(onlyJson(described).description, "Greets someone.")
    const executed = await inProject([
      "exec",
      "--text",
      "EXECUTE: self.tools.greet.hello --who=fay",
      "--family",
      "./greet.ts",
      "--json"
    ])
    assert.strictEqual(executed.code, 0, executed.stdout + executed.stderr)
    const outcomes = onlyJson(executed).outcomes as ReadonlyArray<{ result: unknown }>
    assert.deepStrictEqual(
      outcomes.map((o) => o.result),
      [{ text: "hello, fay" }]
    )
  })

  it("ugent mcp --family serves it to the official SDK client", async () => {
    const root = workspace()
    const client = new Client({ name: "ugent-test", version: "0.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [bin, "mcp", "--family", "./greet.ts", "--root", root, "--stores", "memory"],
        cwd: project,
        stderr: "ignore"
      })
    )
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      assert.includeMembers(names, ["self_tools_greet_hello", "world_tools_file_read"])
      const result = await client.callTool({ name: "self_tools_greet_hello", arguments: { who: "bob" } })
      assert.notStrictEqual(result.isError, true, JSON.stringify(result))
      assert.deepStrictEqual(result.structuredContent, { text: "hello, bob" })
    } finally {
      await client.close()
    }
  })

  it("ugent mcp --family: what the family prints goes to stderr, never into the protocol on stdout", async () => {
    const root = workspace()
    const errors: Array<unknown> = []
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, "mcp", "--family", "./chatty.ts", "--root", root, "--stores", "memory"],
      cwd: project,
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const client = new Client({ name: "ugent-test", version: "0.0.0" })
    client.onerror = (error) => errors.push(error)
    await client.connect(transport)
    try {
      const result = await client.callTool({ name: "self_tools_chatty_echo", arguments: { input: "hi" } })
      assert.notStrictEqual(result.isError, true, JSON.stringify(result))
      assert.deepStrictEqual(errors, [])
      assert.include(stderr, "loading the chatty family")
      assert.include(stderr, "echoing hi")
    } finally {
      await client.close()
    }
  })

  it("ugent serve --family serves it over HTTP", async () => {
    const root = workspace()
    const child: ChildProcess = start(
      ["serve", "--family", join(project, "greet.ts"), "--port", "0", "--stores", "memory"],
      root
    )
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stderr = ""
        child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
          stderr += chunk
          const m = /serving (http:\/\/\S+) /.exec(stderr)
          if (m !== null) resolve(m[1]!)
        })
        child.on("exit", (code) => reject(new Error(`ugent serve exited with ${code}: ${stderr}`)))
      })
      const call = await fetch(`${url}/v1/invoke/self.tools.greet.hello`, {
        method: "POST",
        body: JSON.stringify({ who: "cy" })
      })
      assert.strictEqual(call.status, 200)
      assert.deepStrictEqual(((await call.json()) as { result: unknown }).result, { text: "hello, cy" })
    } finally {
      child.kill("SIGTERM")
      await exited(child)
    }
  })

  it("a recipe's families load relative to the recipe's own directory", async () => {
    const elsewhere = workspace()
    const run = await inProject(
      [
        "invoke",
        "self.tools.greet.hello",
        "--recipe",
        join(project, "recipes", "room.json"),
        "-i",
        '{"who":"dee"}',
        "--json"
      ],
      elsewhere
    )
    assert.strictEqual(run.code, 0, run.stdout + run.stderr)
    assert.deepStrictEqual(onlyJson(run).result, { text: "hello, dee" })
  })

  it("a bare specifier loads an installed package as Node's import would (exported for import only)", async () => {
    const run = await inProject([
      "invoke",
      "self.tools.shout.upper",
      "--family",
      "ugent-family-shout",
      "-i",
      '"hey"',
      "--json"
    ])
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(onlyJson(run).result, "HEY")
  })

  it.effect("the Toolkit offers it, loaded with Families.load and served as an extra family", () =>
    Effect.gen(function* () {
      const family = yield* Families.load("./greet.ts", { from: project })
      const toolkit = yield* Toolkit.fromInvoker.pipe(
        Effect.provide(Server.layer({ root: workspace(), stores: "memory", extraFamilies: [family] }))
      )
      assert.property(toolkit.tools, "world_tools_file_read")
      const results = yield* toolkit.handle("self_tools_greet_hello", { who: "eve" })
      const last = yield* Stream.runLast(results)
      assert.deepStrictEqual(last._tag === "Some" ? last.value.result : undefined, { text: "hello, eve" })
    }).pipe(Effect.scoped)
  )

  it.effect(
    "Families.load takes an absolute path or a file: URL as well, and remembers where the family came from",
    () =>
      Effect.gen(function* () {
        for (const specifier of [join(project, "greet.ts"), pathToFileURL(join(project, "greet.ts")).href]) {
          const family = yield* Families.load(specifier, { from: tmpdir() })
          assert.isTrue(Family.isFamily(family))
          assert.strictEqual(family.name, "greet")
          assert.strictEqual(Families.origin(family), specifier)
        }
        const error = yield* Effect.flip(Families.load("file://elsewhere/greet.ts", { from: project }))
        assert.include(error.message, "The family module file://elsewhere/greet.ts is not a file URL")
      })
  )

  it("Server.layer refuses a recipe whose families were not loaded, rather than serve without them", () => {
    assert.throws(
      () => Server.layer({ root: tmpdir(), recipe: { families: ["./greet.ts"] } }),
      /Families\.loadAll\(recipe\.families/
    )
  })
})

describe("a family module that cannot be served stops the command (exit 2), naming the module", () => {
  it("not found", async () => {
    const message = await usageError(["list", "--family", "./missing.ts"])
    assert.include(
      message,
      `The family module ./missing.ts is not found: ${join(project, "missing.ts")} does not exist`
    )
  })

  it("a file named without ./ is a package name, and the error says how to name the file", async () => {
    const message = await usageError(["list", "--family", "greet.ts"])
    assert.include(message, "The family module greet.ts is not found as a package")
    assert.include(message, "write ./greet.ts")
  })

  it("a package that is not installed", async () => {
    const message = await usageError(["list", "--family", "ugent-family-nowhere"])
    assert.include(
      message,
      "The family module ugent-family-nowhere is not found: no package ugent-family-nowhere is installed"
    )
  })

  it("a module that throws when imported", async () => {
    const message = await usageError(["list", "--family", "./throws.js"])
    assert.include(message, "The family module ./throws.js failed when imported: boom while importing")
  })

  it("no default export", async () => {
    const message = await usageError(["list", "--family", "./named.ts"])
    assert.include(message, "The family module ./named.ts has no default export (it exports family by name)")
  })

  it("a default export that is not a Family", async () => {
    const message = await usageError(["list", "--family", "./lookalike.js"])
    assert.include(message, "The family module ./lookalike.js exports by default an object that is not a Family")
    assert.include(message, "Family.make")
  })

  it("a path a built-in family serves: both families named, and the module", async () => {
    const message = await usageError(["list", "--family", "./clash.ts"])
    assert.include(message, "The families file and clash both register world.tools.file.read")
    assert.include(message, "The family clash is loaded from ./clash.ts")
  })

  it("a path another outside family serves: both named, with their modules", async () => {
    const message = await usageError(["list", "--family", "./greet.ts", "--family", "./greet-again.ts"])
    assert.match(message, /The families greet and greet-again both register self\.tools\.greet\.(hello|root|sign)/)
    assert.include(message, "The family greet is loaded from ./greet.ts")
    assert.include(message, "The family greet-again is loaded from ./greet-again.ts")
  })

  it("a name another family has", async () => {
    const message = await usageError(["list", "--family", "./greet.ts", "--family", "./greet-renamed.ts"])
    assert.include(message, "Two families are named greet")
    assert.include(message, "./greet-renamed.ts")
  })

  it("a prefix that makes no path", async () => {
    const message = await usageError(["list", "--family", "./malformed.ts"])
    assert.include(message, "The family malformed registers Self Tools.x.y, which is not a path")
  })

  it("a layer that fails to build", async () => {
    const message = await usageError(["list", "--family", "./broken.ts"])
    assert.include(message, "The family module ./broken.ts (family broken) failed to build: no database here")
  })

  it("a layer that needs a service nobody provides", async () => {
    const message = await usageError(["list", "--family", "./needy.ts"])
    assert.include(
      message,
      "The family module ./needy.ts (family needy) failed to build: Service not found: outside/Needed"
    )
    assert.include(message, "the family's own layer provides the rest")
  })

  it("a recipe naming a module that is not beside it", async () => {
    const message = await usageError(["list", "--recipe", join(project, "recipes", "missing.json")])
    assert.include(
      message,
      `The family module ./nowhere.ts is not found: ${join(project, "recipes", "nowhere.ts")} does not exist`
    )
  })

  it("on every command that builds a server, before it starts", async () => {
    const commands = [
      ["list"],
      ["describe", "self.tools.greet.hello"],
      ["invoke", "self.tools.greet.hello"],
      ["exec", "--text", "EXECUTE: self.tools.greet.hello --who=x"],
      ["mcp"],
      ["serve", "--port", "0"],
      ["agent", "greet ann"],
      ["report", "--deterministic"],
      ["stats"]
    ]
    const runs = await Promise.all(commands.map((command) => inProject([...command, "--family", "./missing.ts"])))
    for (const [i, run] of runs.entries()) {
      assert.strictEqual(run.code, 2, `${commands[i]![0]}: ${run.stderr}`)
      assert.include(run.stderr, "The family module ./missing.ts is not found", commands[i]![0])
    }
  }, 120_000)
})
