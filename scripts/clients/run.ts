/**
 * Drives the real coding agents (Claude Code, Codex CLI, Gemini CLI,
 * opencode), installed from the npm registry outside the repository, each
 * with `ugent mcp` (installed from the packed tarballs) configured as that
 * client documents and a scripted model on loopback (`model.ts`). The model
 * reads an 86 KB file, a 1 MB file, the pages of working memory each result
 * points to, a small file, edits it, and reads `.env`. What the server sent
 * (`tap.ts` keeps a copy) is compared with what the client passed its model.
 *
 * `node scripts/clients/run.ts [--dir /tmp/ugent-clients] [--only claude,codex,gemini,opencode]`
 * (see scripts/clients/README.md).
 */
import { spawn } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { npm, repository, userEnv, workspaces } from "../packed.ts"
import { type Conversation, isListed, isServers, type Model, pageHint, seenText, start, stringsIn } from "./model.ts"

const arg = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? undefined : process.argv[at + 1]
}
const dir = arg("dir") ?? "/tmp/ugent-clients"
const only = arg("only")?.split(",")
const tap = fileURLToPath(new URL("tap.ts", import.meta.url))
const canary = "sk-canary-never-reaches-a-model"

/** A directory's size in bytes (its files, links not followed, a file linked twice counted once, as `du` does). */
const sizeOf = (path: string, seen = new Set<string>()): number => {
  const s = lstatSync(path, { throwIfNoEntry: false })
  if (s === undefined || s.isSymbolicLink() || seen.has(`${s.dev}:${s.ino}`)) return 0
  seen.add(`${s.dev}:${s.ino}`)
  if (!s.isDirectory()) return s.blocks * 512
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name), seen), 0)
}

interface Installed {
  readonly bin: string
  readonly seconds: number | undefined
  readonly megabytes: number
}

/** Installs `spec` into `<dir>/<slug>` with the npm client unless its bin is there; measures the time and the size. */
const install = async (slug: string, specs: ReadonlyArray<string>, bin: string): Promise<Installed> => {
  const home = join(dir, slug)
  const path = join(home, "node_modules", ".bin", bin)
  let seconds: number | undefined
  if (!existsSync(path)) {
    mkdirSync(home, { recursive: true })
    await npm(["init", "-y"], home)
    await npm(["pkg", "set", "type=module"], home)
    const began = performance.now()
    await npm(["install", "--no-audit", "--no-fund", ...specs], home)
    seconds = (performance.now() - began) / 1000
  }
  return { bin: path, seconds, megabytes: Math.round(sizeOf(join(home, "node_modules")) / 1e6) }
}

/** ugent as the README installs it: the packed tarballs into a new project. */
const installUgent = async (): Promise<Installed> => {
  const packs = join(dir, "packs")
  if (!existsSync(join(dir, "ugent", "node_modules", ".bin", "ugent"))) {
    rmSync(packs, { recursive: true, force: true })
    mkdirSync(packs, { recursive: true })
    await npm(["pack", ...workspaces.flatMap((w) => ["-w", w]), "--pack-destination", packs, "--silent"], repository)
  }
  const tarballs = readdirSync(packs).map((f) => join(packs, f))
  return install("ugent", [...tarballs, "effect@^4.1.0"], "ugent")
}

/** `count` lines of `width` characters (the last characters number the line). */
const lines = (count: number, width: number) =>
  `${Array.from({ length: count }, (_, i) => `${"x".repeat(width - 8)}${String(i + 1).padStart(8, "0")}`).join("\n")}\n`

const workspace = (path: string) => {
  rmSync(path, { recursive: true, force: true })
  mkdirSync(path, { recursive: true })
  writeFileSync(join(path, "big86k.txt"), lines(1100, 77))
  writeFileSync(join(path, "big1m.txt"), lines(2000, 499))
  writeFileSync(join(path, "notes.md"), "# Notes\n\nstatus: draft\n")
  writeFileSync(join(path, ".env"), `API_KEY=${canary}\n`)
}

interface Setup {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Record<string, string>
}

interface Client {
  readonly key: string
  readonly title: string
  /** The package and the version measured (a newer one may pass its model results otherwise: run it again). */
  readonly pkg: string
  readonly bin: string
  /** Writes the client's configuration (as its documentation gives it) and says how to start it. */
  readonly setup: (o: { bin: string; home: string; work: string; url: string; mcp: ReadonlyArray<string> }) => Setup
}

const prompt = "Read the large files, their pages, edit notes.md, then read .env."

const toml = (v: string | ReadonlyArray<string>) => JSON.stringify(v)

const clients: ReadonlyArray<Client> = [
  {
    key: "claude",
    title: "Claude Code",
    pkg: "@anthropic-ai/claude-code@2.1.332",
    bin: "claude",
    setup: ({ bin, home, url, mcp }) => {
      const config = join(home, "mcp.json")
      // The project's .mcp.json, as the README gives it.
      writeFileSync(
        config,
        JSON.stringify({ mcpServers: { ugent: { type: "stdio", command: mcp[0], args: mcp.slice(1) } } }, null, 2)
      )
      return {
        command: bin,
        args: ["-p", prompt, "--mcp-config", config, "--strict-mcp-config", "--allowedTools", "mcp__ugent"],
        env: {
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: "sk-ant-scripted",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1"
        }
      }
    }
  },
  {
    key: "codex",
    title: "Codex CLI",
    pkg: "@openai/codex@0.171.0",
    bin: "codex",
    setup: ({ bin, home, work, url, mcp }) => {
      const codexHome = join(home, ".codex")
      mkdirSync(codexHome, { recursive: true })
      writeFileSync(
        join(codexHome, "config.toml"),
        [
          // A model Codex knows, so its own truncation policy (10,000 tokens) applies, not the fallback.
          `model = "scripted"`,
          `model_provider = "scripted"`,
          ``,
          `[model_providers.scripted]`,
          `name = "Scripted model"`,
          `base_url = ${toml(`${url}/v1`)}`,
          `wire_api = "responses"`,
          `env_key = "SCRIPTED_API_KEY"`,
          ``,
          // As the README gives it.
          `[mcp_servers.ugent]`,
          `command = ${toml(mcp[0]!)}`,
          `args = ${toml(mcp.slice(1))}`,
          // Wait for the server before the first turn (else a slow start leaves the model with none of its tools).
          `required = true`,
          `startup_timeout_sec = 30`,
          `default_tools_approval_mode = "approve"`,
          ``
        ].join("\n")
      )
      return {
        command: bin,
        args: ["exec", "--skip-git-repo-check", "-C", work, prompt],
        env: { CODEX_HOME: codexHome, SCRIPTED_API_KEY: "scripted" }
      }
    }
  },
  {
    key: "gemini",
    title: "Gemini CLI",
    pkg: "@google/gemini-cli@0.61.0",
    bin: "gemini",
    setup: ({ bin, home, url, mcp }) => {
      const settings = join(home, ".gemini")
      mkdirSync(settings, { recursive: true })
      writeFileSync(
        join(settings, "settings.json"),
        JSON.stringify(
          {
            security: { auth: { selectedType: "gemini-api-key" } },
            mcpServers: { ugent: { command: mcp[0], args: mcp.slice(1), trust: true } }
          },
          null,
          2
        )
      )
      return {
        command: bin,
        args: ["-p", prompt],
        env: {
          GEMINI_API_KEY: "scripted",
          GOOGLE_GEMINI_BASE_URL: url,
          GEMINI_CLI_NO_RELAUNCH: "true",
          GEMINI_CLI_TRUST_WORKSPACE: "true"
        }
      }
    }
  },
  {
    key: "opencode",
    title: "opencode",
    pkg: "opencode-ai@1.18.33",
    bin: "opencode",
    setup: ({ bin, home, work, url, mcp }) => {
      const config = join(home, "opencode.json")
      writeFileSync(
        config,
        JSON.stringify(
          {
            $schema: "https://opencode.ai/config.json",
            model: "scripted/scripted",
            provider: {
              scripted: {
                npm: "@ai-sdk/openai-compatible",
                name: "Scripted model",
                options: { baseURL: `${url}/v1`, apiKey: "scripted" },
                models: { scripted: { name: "Scripted model" } }
              }
            },
            mcp: { ugent: { type: "local", command: [...mcp], enabled: true } }
          },
          null,
          2
        )
      )
      return {
        command: bin,
        args: ["run", "--dir", work, prompt],
        env: { OPENCODE_CONFIG: config, OPENCODE_DISABLE_AUTOUPDATE: "true" }
      }
    }
  }
]

/** Runs a command to its end (or `timeout` ms), its output to files. */
const run = (setup: Setup, cwd: string, home: string, out: string, timeout: number) =>
  new Promise<{ code: number | null; seconds: number }>((resolve) => {
    const began = performance.now()
    const child = spawn(setup.command, [...setup.args], {
      cwd,
      env: userEnv({
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_DATA_HOME: join(home, ".local", "share"),
        XDG_CACHE_HOME: join(home, ".cache"),
        XDG_STATE_HOME: join(home, ".local", "state"),
        CI: "1",
        ...setup.env
      }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    const chunks: Array<string> = []
    child.stdout.on("data", (c: Buffer) => chunks.push(c.toString()))
    child.stderr.on("data", (c: Buffer) => chunks.push(c.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeout)
    child.on("exit", (code) => {
      clearTimeout(timer)
      writeFileSync(out, chunks.join(""))
      resolve({ code, seconds: (performance.now() - began) / 1000 })
    })
  })

/** The texts of the tool results the server wrote, in order (a tap's copy of its stdout). */
const sentTexts = (tapLog: string): Array<{ text: string; isError: boolean }> =>
  existsSync(tapLog)
    ? readFileSync(tapLog, "utf8")
        .split("\n")
        .flatMap((line) => {
          try {
            const m = JSON.parse(line) as { result?: { content?: Array<{ text?: string }>; isError?: boolean } }
            const content = m.result?.content
            return Array.isArray(content)
              ? [{ text: content.map((c) => c.text ?? "").join(""), isError: m.result?.isError === true }]
              : []
          } catch {
            return []
          }
        })
    : []

/** One row of the table: a call, or the pages that followed one. */
interface Row {
  readonly client: string
  readonly call: string
  readonly count: number
  readonly sentBytes: number
  readonly receivedBytes: number
  readonly whole: boolean
  /** The page hints this client's model read: each names a tool it lists (exactly), or by the end of one, or none. */
  readonly hint: "listed" | "suffix" | "none" | "-"
}

const bytes = (v: unknown) => Buffer.byteLength(typeof v === "string" ? v : JSON.stringify(v))

const rowsOf = (title: string, conversation: Conversation | undefined, sent: ReturnType<typeof sentTexts>) => {
  const rows: Array<Row> = []
  if (conversation === undefined) return rows
  conversation.exchanges
    .filter((e) => isServers(e.name))
    .forEach((e, i) => {
      const mine = sent[i]
      const seen = seenText(e.result)
      // Whole: the text is there, as it is or escaped in JSON text (Gemini CLI wraps a failure once, as a string).
      const forms = mine === undefined ? [] : [mine.text, JSON.stringify(mine.text).slice(1, -1)]
      const whole = forms.some((f) => seen.includes(f) || stringsIn(e.result).some((s) => s.includes(f)))
      const hint = pageHint(seen)
      const hintKind: Row["hint"] =
        hint === undefined
          ? "-"
          : isListed(conversation.tools, hint.named)
            ? "listed"
            : conversation.tools.some((t) => t.endsWith(hint.named))
              ? "suffix"
              : "none"
      const page = e.name.endsWith("self_memory_read")
      const call = page
        ? "memory pages"
        : `${e.name.replace(/^.*?(world_tools_|self_)/, "$1")} ${String(e.args.path ?? "")}`.trim()
      const last = rows.at(-1)
      if (page && last?.call === "memory pages") {
        rows[rows.length - 1] = {
          ...last,
          count: last.count + 1,
          sentBytes: Math.max(last.sentBytes, bytes(mine?.text ?? "")),
          receivedBytes: Math.max(last.receivedBytes, bytes(e.result)),
          whole: last.whole && whole,
          hint: last.hint === "-" ? hintKind : hintKind === "-" || hintKind === last.hint ? last.hint : "none"
        }
      } else {
        rows.push({
          client: title,
          call,
          count: 1,
          sentBytes: bytes(mine?.text ?? ""),
          receivedBytes: bytes(e.result),
          whole,
          hint: hintKind
        })
      }
    })
  return rows
}

const main = async () => {
  mkdirSync(dir, { recursive: true })
  const ugent = await installUgent()
  console.log(
    `ugent: ${ugent.bin} (${ugent.megabytes} MB${ugent.seconds === undefined ? "" : `, ${ugent.seconds.toFixed(1)} s`})`
  )
  const model: Model = await start()
  const table: Array<Row> = []
  const notes: Array<string> = []
  const sessions: Array<Record<string, unknown>> = []
  try {
    for (const client of clients.filter((c) => only === undefined || only.includes(c.key))) {
      const installed = await install(client.key, [client.pkg], client.bin)
      const base = join(dir, "runs", client.key)
      rmSync(base, { recursive: true, force: true })
      const home = join(base, "home")
      const work = join(base, "work")
      mkdirSync(home, { recursive: true })
      workspace(work)
      const tapLog = join(base, "tap.jsonl")
      const mcp = [
        process.execPath,
        tap,
        tapLog,
        ugent.bin,
        "mcp",
        "--root",
        work,
        "--trust",
        "L1",
        "--stores",
        "memory"
      ]
      const setup = client.setup({ bin: installed.bin, home, work, url: model.url, mcp })
      model.seen.latest = undefined
      model.seen.requests = 0
      model.seen.first.length = 0
      model.log.length = 0
      const result = await run(setup, work, home, join(base, "output.txt"), 600_000)
      // Set by the model server while the client ran.
      const latest = model.seen.latest as Conversation | undefined
      const conversation = latest === undefined ? undefined : { ...latest, exchanges: model.seen.first }
      const sent = sentTexts(tapLog)
      writeFileSync(
        join(base, "model.json"),
        JSON.stringify({ log: model.log, requests: model.seen.requests, last: model.last.body }, null, 1)
      )
      const rows = rowsOf(client.title, conversation, sent)
      table.push(...rows)
      const leaked = conversation?.exchanges.some((e) => seenText(e.result).includes(canary)) === true
      const edited = readFileSync(join(work, "notes.md"), "utf8").includes("status: done")
      sessions.push({
        client: client.title,
        exit: result.code,
        seconds: Math.round(result.seconds),
        installSeconds: installed.seconds,
        megabytes: installed.megabytes,
        toolsListed: conversation?.tools.length ?? 0,
        calls: sent.length,
        edited,
        leaked
      })
      notes.push(
        `${client.title} ${installed.bin.split("/node_modules/")[0]}: exit ${result.code} in ${result.seconds.toFixed(0)} s; ` +
          `install ${installed.seconds === undefined ? "(already installed)" : `${installed.seconds.toFixed(1)} s`}, ${installed.megabytes} MB; ` +
          `${conversation?.tools.length ?? 0} tools listed to the model; ${model.seen.requests} requests to the model, ${sent.length} calls answered; ` +
          `edit ${edited ? "made" : "not made"}; secret ${leaked ? "LEAKED" : "not seen"}; requests: ${[...new Set(model.log)].join(", ")}`
      )
      console.log(notes.at(-1))
    }
  } finally {
    await model.close()
  }
  const lines = [
    "| Client | Call | Sent by ugent (bytes) | Received by the model (bytes) | Whole | Page hint names a listed tool |",
    "|---|---|---:|---:|---|---|",
    ...table.map(
      (r) =>
        `| ${r.client} | ${r.count > 1 ? `${r.count} ${r.call} (largest)` : r.call} | ${r.sentBytes.toLocaleString("en-US")} | ${r.receivedBytes.toLocaleString("en-US")} | ${r.whole ? "yes" : "**no**"} | ${r.hint} |`
    )
  ]
  console.log(`\n${lines.join("\n")}\n\n${notes.map((n) => `- ${n}`).join("\n")}`)
  writeFileSync(join(dir, "results.json"), JSON.stringify({ table, sessions, notes }, null, 2))
}

await main()
