/**
 * Results for the model on the other end of each client: the text a client
 * hands its model, within what that client passes whole (named at
 * initialize), with hints in the names it lists, through the official SDK
 * client (in process, over stdio and over streamable HTTP).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@ugent/agentese"
import { Effect } from "effect"
import { afterAll } from "vitest"
import { type CallResult, connect, textOf, ugentBin } from "./fixtures/connect.ts"
import { serve } from "./fixtures/http.ts"
import { memoryClient } from "./fixtures/memory.ts"

const root = mkdtempSync(join(tmpdir(), "ugent-clients-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** `count` lines of `width` characters each (the last characters number the line). */
const lines = (count: number, width: number) =>
  Array.from({ length: count }, (_, i) => `${"x".repeat(width - 8)}${String(i + 1).padStart(8, "0")}`)

const file86k = lines(1100, 77)
const file1m = lines(2000, 499)
writeFileSync(join(root, "README.md"), "# demo\nHello.\n")
writeFileSync(join(root, "big86k.txt"), `${file86k.join("\n")}\n`)
writeFileSync(join(root, "big1m.txt"), `${file1m.join("\n")}\n`)

/**
 * What each client passes to its model whole, as the real clients were measured passing it to a scripted model
 * (scripts/clients/run.ts; not the server's own table).
 */
const passesWhole: Readonly<Record<string, (text: string) => boolean>> = {
  "claude-code": (t) => t.length <= 50_000,
  // Codex with a custom provider's model kept 6,016 bytes of head and 5,982 of tail, its own 34-byte header included.
  "codex-mcp-client": (t) => Buffer.byteLength(t) <= 11_900,
  "gemini-cli-mcp-client": (t) => t.length <= 40_000,
  opencode: (t) => Buffer.byteLength(t) <= 50 * 1024 && t.split("\n").length <= 2000
}
const everyClient = (t: string) => Object.values(passesWhole).every((fits) => fits(t))

/** How each client lists the server's self.memory.read, the server configured as `ugent` (measured likewise). */
const memoryReadListed: Readonly<Record<string, string>> = {
  "claude-code": "mcp__ugent__self_memory_read",
  "codex-mcp-client": "self_memory_read",
  "gemini-cli-mcp-client": "mcp_ugent_self_memory_read",
  opencode: "ugent_self_memory_read"
}

/** Claude Code and Codex hand their model the structured content, when there is one, in place of the text. */
const readsStructured = new Set(["claude-code", "codex-mcp-client"])

type Call = (name: string, args: Record<string, unknown>) => Effect.Effect<CallResult>

/**
 * Reads a file through `call` and, when the client got a summary, every page
 * its hints lead to; each text must pass `fits`. Returns the read's text, or
 * the pages' texts joined (without their headers).
 */
const readAll = (call: Call, path: string, fits: (text: string) => boolean, structured: boolean, listed: string) =>
  Effect.gen(function* () {
    const first = yield* call("world_tools_file_read", { path })
    const text = textOf(first)
    assert.isTrue(fits(text), `the first answer to ${path} is ${text.length} characters`)
    assert.strictEqual(first.structuredContent !== undefined, structured)
    if (!text.includes("kept in working memory")) return { whole: true, text, pages: 0 }
    assert.notInclude(text, "self.memory.read")
    const named = (prefix: string) => new RegExp(`${prefix}(?<![\\w.])${listed} (\\{[^}]*\\})`)
    let hint = named("").exec(text)?.[1]
    const bodies: Array<string> = []
    while (hint !== undefined) {
      const page = yield* call("self_memory_read", JSON.parse(hint))
      assert.notStrictEqual(page.isError, true, textOf(page))
      const pageText = textOf(page)
      assert.isTrue(fits(pageText), `a page of ${path} is ${pageText.length} characters`)
      const [head, ...body] = pageText.split("\n")
      bodies.push(body.join("\n"))
      hint = named("; more: ").exec(head!)?.[1]
      // The next page is asked for as large as this one was.
      if (hint !== undefined) assert.property(JSON.parse(hint), "lines")
    }
    return { whole: false, text: bodies.join("\n"), pages: bodies.length }
  })

const numbered = (ls: ReadonlyArray<string>) => ls.map((l, i) => `${i + 1}\t${l}`).join("\n")
const readText = (path: string, ls: ReadonlyArray<string>) =>
  `${path}: lines 1-${ls.length} of ${ls.length}\n${numbered(ls)}`

const layer = (options: Partial<Server.Options> = {}) => Server.layer({ root, stores: "memory", ...options })

describe("a budget per client (issue 27)", () => {
  for (const name of [...Object.keys(passesWhole), "an-editor-we-do-not-know"]) {
    const fits = passesWhole[name] ?? everyClient
    it.effect(
      `${name}: an 86 KB read and a 1 MB read reach the model whole or as a summary whose pages fit`,
      () =>
        Effect.gen(function* () {
          const { callTool } = yield* memoryClient({ clientName: name })
          const call: Call = (n, args) =>
            Effect.orDie(callTool({ name: n, arguments: args })) as Effect.Effect<CallResult>
          // Claude Code and Codex hand their model the structured content in place of the text: they are sent none.
          const structured = !readsStructured.has(name)
          const listed = memoryReadListed[name] ?? "self_memory_read"
          const small = yield* readAll(call, "README.md", fits, structured, listed)
          assert.deepStrictEqual(small, {
            whole: true,
            text: "README.md: lines 1-2 of 2\n1\t# demo\n2\tHello.",
            pages: 0
          })
          for (const [path, content] of [
            ["big86k.txt", file86k],
            ["big1m.txt", file1m]
          ] as const) {
            const read = yield* readAll(call, path, fits, structured, listed)
            const expected = readText(path, content)
            if (read.whole) assert.strictEqual(read.text, expected)
            else {
              // The pages, joined, are the text the model would have read: the header, then every line, in order.
              assert.strictEqual(read.text, expected)
              assert.isAbove(read.pages, 1)
            }
          }
        }).pipe(Effect.scoped, Effect.provide(layer())),
      120_000
    )
  }

  it.effect(
    "Gemini CLI, which hands its model a failed call's whole result, gets the failure's text without its JSON",
    () =>
      Effect.gen(function* () {
        writeFileSync(join(root, ".env"), "API_KEY=canary\n")
        for (const [name, meta] of [
          ["gemini-cli-mcp-client", false],
          ["claude-code", true]
        ] as const) {
          const { callTool } = yield* memoryClient({ clientName: name })
          const denied = (yield* Effect.orDie(
            callTool({ name: "world_tools_file_read", arguments: { path: ".env" } })
          )) as CallResult & { _meta?: Record<string, unknown> }
          assert.isTrue(denied.isError)
          assert.match(textOf(denied), /^Forbidden: /)
          assert.strictEqual(denied._meta?.["ugent/error"] !== undefined, meta, name)
          // Gemini CLI wrapped the raw result: 1,077 bytes reached its model for this 186-byte denial, with the JSON.
          if (!meta) assert.isBelow(Buffer.byteLength(JSON.stringify(denied)), 400)
        }
      }).pipe(Effect.scoped, Effect.provide(layer()))
  )

  it.effect("the recipe's resultBudgetTokens wins over the client's own limit", () =>
    Effect.gen(function* () {
      const { callTool } = yield* memoryClient({ clientName: "claude-code" })
      // About 96,000 characters: more than Claude Code passes whole, within the recipe's 30,000 tokens.
      const read = yield* Effect.orDie(callTool({ name: "world_tools_file_read", arguments: { path: "big86k.txt" } }))
      assert.strictEqual(textOf(read as CallResult), readText("big86k.txt", file86k))
    }).pipe(Effect.scoped, Effect.provide(layer({ recipe: { resultBudgetTokens: 30_000 } })))
  )

  it.effect("the host's budget (--budget) wins over the client's own limit, and its pages fit it", () =>
    Effect.gen(function* () {
      const { callTool } = yield* memoryClient({ clientName: "claude-code" })
      const call: Call = (n, args) => Effect.orDie(callTool({ name: n, arguments: args })) as Effect.Effect<CallResult>
      const read = yield* readAll(
        call,
        "big86k.txt",
        (t) => t.length <= 2_000 * 4,
        false,
        memoryReadListed["claude-code"]!
      )
      assert.isFalse(read.whole)
      assert.strictEqual(read.text, readText("big86k.txt", file86k))
    }).pipe(Effect.scoped, Effect.provide(layer({ budgetTokens: 2_000 })))
  )

  it.effect("a page asked for larger than the client passes whole is cut to fit, and says where to read on", () =>
    Effect.gen(function* () {
      const { callTool } = yield* memoryClient({ clientName: "gemini-cli-mcp-client" })
      const first = yield* Effect.orDie(callTool({ name: "world_tools_file_read", arguments: { path: "big1m.txt" } }))
      const id = (first.structuredContent as { memoryId: string }).memoryId
      const page = (yield* Effect.orDie(
        callTool({ name: "self_memory_read", arguments: { id, line: 1, lines: 2000 } })
      )) as CallResult
      const text = textOf(page)
      assert.isAtMost(text.length, 40_000)
      const structured = page.structuredContent as { end: number; hasMore: boolean; next: string }
      assert.isTrue(structured.hasMore)
      assert.match(
        text.split("\n")[0]!,
        new RegExp(
          `; more: mcp_ugent_self_memory_read \\{"id":"${id}","line":${structured.end + 1},"lines":${structured.end}\\}`
        )
      )
    }).pipe(Effect.scoped, Effect.provide(layer()))
  )

  it("over stdio, ugent mcp gives Claude Code the text alone (it hands its model structuredContent in place of the text); --budget wins", async () => {
    const start = (...flags: Array<string>) =>
      connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [ugentBin, "mcp", "--root", root, "--stores", "memory", ...flags],
          stderr: "ignore"
        }),
        "claude-code"
      )
    const client = await start()
    try {
      // The instructions name the tools as Claude Code lists them, too.
      assert.include(client.getInstructions(), "read it in parts with mcp__ugent__self_memory_read")
      assert.include(
        client.getInstructions(),
        "so mcp__ugent__world_tools_file_write and mcp__ugent__world_tools_file_edit"
      )
      const read = (await client.callTool({
        name: "world_tools_file_read",
        arguments: { path: "README.md" }
      })) as CallResult
      assert.strictEqual(textOf(read), "README.md: lines 1-2 of 2\n1\t# demo\n2\tHello.")
      // Claude Code 2.1 was seen passing its model the structured content (with the proof token) instead of this text.
      assert.strictEqual(read.structuredContent, undefined)
      const big = (await client.callTool({
        name: "world_tools_file_read",
        arguments: { path: "big86k.txt" }
      })) as CallResult
      assert.isAtMost(textOf(big).length, 50_000)
      assert.include(textOf(big), "mcp__ugent__self_memory_read {")
    } finally {
      await client.close()
    }
    const roomy = await start("--budget", "30000")
    try {
      const big = (await roomy.callTool({
        name: "world_tools_file_read",
        arguments: { path: "big86k.txt" }
      })) as CallResult
      assert.strictEqual(textOf(big), readText("big86k.txt", file86k))
    } finally {
      await roomy.close()
    }
  }, 60_000)

  it("over streamable HTTP, a client's name sets its budget for its session", async () => {
    const server = await serve({ root, stores: "memory" })
    try {
      const opencode = await server.client({}, "opencode")
      const claude = await server.client({}, "claude-code")
      // 1,100 lines: within opencode's 2,000 lines but over its 50 KB, and over Claude Code's 50,000 characters.
      const a = (await opencode.callTool({
        name: "world_tools_file_read",
        arguments: { path: "big86k.txt" }
      })) as CallResult
      const b = (await claude.callTool({
        name: "world_tools_file_read",
        arguments: { path: "big86k.txt" }
      })) as CallResult
      assert.isTrue(passesWhole.opencode!(textOf(a)))
      assert.isTrue(passesWhole["claude-code"]!(textOf(b)))
      // 51,200 bytes / 4 and 50,000 characters / 4.
      assert.include(textOf(a), "over the budget of one answer (about 12,800 tokens)")
      assert.include(textOf(b), "over the budget of one answer (about 12,500 tokens)")
      await opencode.close()
      await claude.close()
    } finally {
      await server.dispose()
    }
  }, 60_000)
})
