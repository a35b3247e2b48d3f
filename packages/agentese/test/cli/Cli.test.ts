/**
 * The `ugent` binary, run for real in a child process against temp
 * workspaces: output contracts (`--json` prints exactly one JSON object),
 * exit codes (0 success, 1 a call that did not succeed, 2 usage), and the
 * gates of threats.md on the command-line road.
 */

import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { DatabaseSync } from "node:sqlite"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { hasGit, onlyJson, repository, ugent, workspace } from "./fixture.ts"

// The `--json` contract, decoded rather than cast: an output of another shape fails the test.
const Outcome = Schema.Struct({
  ok: Schema.Boolean,
  result: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  error: Schema.optionalKey(
    Schema.StructWithRest(Schema.Struct({ _tag: Schema.String, message: Schema.String }), [
      Schema.Record(Schema.String, Schema.Unknown)
    ])
  ),
  path: Schema.optionalKey(Schema.String)
})
const Outcomes = Schema.Struct({ outcomes: Schema.Array(Outcome) })

const outcome = (run: Parameters<typeof onlyJson>[0]) => Schema.decodeUnknownSync(Outcome)(onlyJson(run))

const recipe = (root: string, json: unknown) => {
  const file = join(root, "recipe.json")
  writeFileSync(file, JSON.stringify(json))
  return file
}

describe("ugent", () => {
  describe("--help", () => {
    it("runs with npx from the repository root and from a subdirectory", async () => {
      const fromRoot = await ugent(["--help"], { cwd: repository, command: ["npx", "--no-install", "ugent"] })
      assert.strictEqual(fromRoot.code, 0, fromRoot.stderr)
      for (const command of ["list", "describe", "invoke", "exec", "serve", "mcp"]) {
        assert.include(fromRoot.stdout, command)
      }
      const fromSub = await ugent(["invoke", "--help"], {
        cwd: join(repository, "packages", "agentese", "test"),
        command: ["npx", "--no-install", "ugent"]
      })
      assert.strictEqual(fromSub.code, 0, fromSub.stderr)
      assert.include(fromSub.stdout, "--input")
    })
  })

  describe("list", () => {
    it("--json prints exactly one JSON object: the caller and its paths", async () => {
      const root = workspace()
      const run = await ugent(["list", "--json"], { cwd: root })
      assert.strictEqual(run.code, 0, run.stderr)
      const listing = onlyJson(run) as { observer: unknown; paths: Array<{ path: string; providerName: string }> }
      assert.deepStrictEqual(listing.observer, { id: "local", trust: 0 })
      const read = listing.paths.find((p) => p.path === "world.tools.file.read")
      assert.strictEqual(read?.providerName, "world_tools_file_read")
      assert.isUndefined(listing.paths.find((p) => p.path === "world.tools.file.write"))
    })

    it("prints one line per path, with its level", async () => {
      const root = workspace()
      const run = await ugent(["list", "--trust", "L1", "--root", root], { cwd: repository })
      assert.strictEqual(run.code, 0, run.stderr)
      const lines = run.stdout.trim().split("\n")
      assert.isTrue(
        lines.some((l) => /^world\.tools\.file\.write\s+L1\s+\S/.test(l)),
        run.stdout
      )
      assert.isTrue(
        lines.some((l) => /^world\.tools\.file\.read\s+L0\s+\S/.test(l)),
        run.stdout
      )
    })
  })

  describe("describe", () => {
    it("--json describes a provider-safe name with its input schema", async () => {
      const root = workspace()
      const run = await ugent(["describe", "world_tools_file_read", "--json"], { cwd: root })
      assert.strictEqual(run.code, 0, run.stderr)
      const d = onlyJson(run) as { path: string; input: { required: Array<string> } }
      assert.strictEqual(d.path, "world.tools.file.read")
      assert.include(d.input.required, "path")
    })

    it("a path hidden from the caller is unknown: exit 1 with ok:false", async () => {
      const root = workspace()
      const run = await ugent(["describe", "world.tools.file.write", "--json"], { cwd: root })
      assert.strictEqual(run.code, 1)
      const o = outcome(run)
      assert.isFalse(o.ok)
      assert.strictEqual(o.error?._tag, "UnknownPath")
    })
  })

  describe("invoke", () => {
    it("--json prints exactly one JSON object with the result, exit 0", async () => {
      const root = workspace()
      const run = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--json"], {
        cwd: root
      })
      assert.strictEqual(run.code, 0, run.stderr)
      const o = outcome(run)
      assert.isTrue(o.ok)
      assert.strictEqual(o.result?.content, "1\talpha\n2\tbeta")
    })

    it("accepts a provider-safe name", async () => {
      const root = workspace()
      const run = await ugent(["invoke", "world_tools_file_read", "-i", '{"path": "b.md"}', "--json"], { cwd: root })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(outcome(run).path, "world.tools.file.read")
    })

    it("without --json prints the result as indented JSON, and a failure's message on stderr only", async () => {
      const root = workspace()
      const ok = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}'], { cwd: root })
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.strictEqual((JSON.parse(ok.stdout) as { content: string }).content, "1\talpha\n2\tbeta")
      assert.include(ok.stdout, '\n  "content"')
      const failed = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "missing.txt"}'], {
        cwd: root
      })
      assert.strictEqual(failed.code, 1)
      assert.strictEqual(failed.stdout, "")
      assert.match(failed.stderr, /missing\.txt/)
    })

    it("runs a pipeline a >> b: a read, then an edit with the read's proof", async () => {
      const root = workspace()
      const run = await ugent(
        [
          "invoke",
          "world.tools.file.read >> world.tools.file.edit --oldText=alpha --newText=ALPHA",
          "--input",
          '{"path": "a.txt"}',
          "--trust",
          "L1",
          "--json"
        ],
        { cwd: root }
      )
      assert.strictEqual(run.code, 0, run.stdout + run.stderr)
      assert.strictEqual(outcome(run).path, "world.tools.file.edit")
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "ALPHA\nbeta\n")
    })

    it("an unknown path exits 1 with UnknownPath", async () => {
      const root = workspace()
      const run = await ugent(["invoke", "world.tools.file.raed", "--input", '{"path": "a.txt"}', "--json"], {
        cwd: root
      })
      assert.strictEqual(run.code, 1)
      assert.strictEqual(outcome(run).error?._tag, "UnknownPath")
    })

    it("--trust L0 refuses a write with TrustDenied, exit 1, nothing written", async () => {
      const root = workspace()
      const run = await ugent(
        ["invoke", "world.tools.file.write", "--input", '{"path": "c.txt", "content": "x"}', "--json"],
        { cwd: root }
      )
      assert.strictEqual(run.code, 1)
      assert.strictEqual(outcome(run).error?._tag, "TrustDenied")
      assert.isFalse(existsSync(join(root, "c.txt")))
    })

    it("a write with the proof token of a previous read's JSON output succeeds at L1", async () => {
      const root = workspace()
      const read = outcome(
        await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--json"], { cwd: root })
      )
      const proof = read.result?.proof as string
      assert.match(proof, /^rp1\./)
      const write = await ugent(
        [
          "invoke",
          "world.tools.file.write",
          "--input",
          JSON.stringify({ path: "a.txt", content: "rewritten\n", proof }),
          "--trust",
          "L1",
          "--json"
        ],
        { cwd: root }
      )
      assert.strictEqual(write.code, 0, write.stdout + write.stderr)
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "rewritten\n")
    })

    it("the proof key of the workspace cannot be read through the tools", async () => {
      const root = workspace()
      const first = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}'], { cwd: root })
      assert.strictEqual(first.code, 0, first.stderr)
      assert.isTrue(existsSync(join(root, ".ugent", "proof.key")))
      const run = await ugent(
        ["invoke", "world.tools.file.read", "--input", '{"path": ".ugent/proof.key"}', "--json"],
        {
          cwd: root
        }
      )
      assert.strictEqual(run.code, 1)
      assert.notInclude(run.stdout, readFileSync(join(root, ".ugent", "proof.key"), "utf8"))
    })

    it("a proof from another key (UGENT_PROOF_KEY) is refused", async () => {
      const root = workspace()
      const read = outcome(
        await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--json"], {
          cwd: root,
          env: { UGENT_PROOF_KEY: "a".repeat(32) }
        })
      )
      const write = await ugent(
        [
          "invoke",
          "world.tools.file.write",
          "--input",
          JSON.stringify({ path: "a.txt", content: "forged\n", proof: read.result?.proof }),
          "--trust",
          "L1",
          "--json"
        ],
        { cwd: root, env: { UGENT_PROOF_KEY: "b".repeat(32) } }
      )
      assert.strictEqual(write.code, 1)
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "alpha\nbeta\n")
    })

    it("reads the input from stdin with --input -", async () => {
      const root = workspace()
      const run = await ugent(["invoke", "world.tools.file.read", "--input", "-", "--json"], {
        cwd: root,
        stdin: '{"path": "b.md"}'
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(outcome(run).result?.content, "1\t# b")
    })
  })

  describe("gates", () => {
    it("a path the recipe denies is not listed and not callable", async () => {
      const root = workspace()
      const file = recipe(root, { deny: ["world.tools.search.*"] })
      const listed = onlyJson(await ugent(["list", "--recipe", file, "--json"], { cwd: root })) as {
        paths: Array<{ path: string }>
      }
      assert.notInclude(
        listed.paths.map((p) => p.path),
        "world.tools.search.grep"
      )
      const call = await ugent(
        ["invoke", "world.tools.search.grep", "--input", '{"pattern": "alpha"}', "--recipe", file, "--json"],
        { cwd: root }
      )
      assert.strictEqual(call.code, 1)
      assert.strictEqual(outcome(call).error?._tag, "PolicyDenied")
    })

    it("a recipe's requireApproval is refused: the CLI without a terminal has no approver, the request stays pending", async () => {
      const root = workspace()
      const file = recipe(root, { requireApproval: ["world.tools.file.read"] })
      const run = await ugent(
        ["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--recipe", file, "--json"],
        { cwd: root }
      )
      assert.strictEqual(run.code, 1)
      const o = outcome(run)
      assert.strictEqual(o.error?._tag, "ApprovalPending")
      assert.strictEqual(o.error?.reason, "no-channel")
    })

    it("an L2 write asks for approval and is refused, nothing written", async () => {
      const root = workspace()
      const file = recipe(root, { minTrust: { "world.tools.file.write": 2 } })
      const run = await ugent(
        [
          "invoke",
          "world.tools.file.write",
          "--input",
          '{"path": "c.txt", "content": "x"}',
          "--trust",
          "L2",
          "--recipe",
          file,
          "--json"
        ],
        { cwd: root }
      )
      assert.strictEqual(run.code, 1)
      assert.strictEqual(outcome(run).error?._tag, "ApprovalPending")
      assert.isFalse(existsSync(join(root, "c.txt")))
    })

    it("identity fields in the input do not change the caller", async () => {
      const root = workspace()
      const run = await ugent(
        [
          "invoke",
          "world.tools.file.write",
          "--input",
          JSON.stringify({ path: "c.txt", content: "x", trust: 3, observer: { id: "admin", trust: 3 } }),
          "--json"
        ],
        { cwd: root }
      )
      assert.strictEqual(run.code, 1)
      const o = outcome(run)
      assert.strictEqual(o.error?._tag, "TrustDenied")
      assert.strictEqual(o.error?.actual, 0)
    })
  })

  describe("exec", () => {
    it("refuses a call repeated with the same result and nothing written, with LoopDetected (exit 1)", async () => {
      const root = workspace()
      const line = "EXECUTE: world.tools.file.read --path=a.txt"
      const again = "EXECUTE: world.tools.file.read --path=./a.txt"
      const run = await ugent(["exec", "--json"], { cwd: root, stdin: [line, line, again, line].join("\n") })
      assert.strictEqual(run.code, 1)
      const { outcomes } = Schema.decodeUnknownSync(Outcomes)(onlyJson(run))
      assert.deepStrictEqual(
        outcomes.map((o) => (o.ok ? "ok" : o.error?._tag)),
        ["ok", "ok", "ok", "LoopDetected"]
      )
    })

    it("a denied call does not break the next one", async () => {
      const root = workspace()
      const text = [
        '<tool_call>{"tool": "world_tools_file_write", "params": {"path": "c.txt", "content": "x"}}</tool_call>',
        "EXECUTE: world.tools.file.read --path=b.md"
      ].join("\n")
      const run = await ugent(["exec", "--text", text, "--json"], { cwd: root })
      assert.strictEqual(run.code, 1)
      const { outcomes } = Schema.decodeUnknownSync(Outcomes)(onlyJson(run))
      assert.deepStrictEqual(
        outcomes.map((o) => (o.ok ? "ok" : o.error?._tag)),
        ["TrustDenied", "ok"]
      )
    })
  })

  describe("usage errors exit 2", () => {
    it("invalid --input JSON: with --json, one JSON object on stdout", async () => {
      const root = workspace()
      const run = await ugent(["invoke", "world.tools.file.read", "--input", "{path: a.txt}", "--json"], {
        cwd: root
      })
      assert.strictEqual(run.code, 2)
      const o = outcome(run)
      assert.isFalse(o.ok)
      assert.strictEqual(o.error?._tag, "UsageError")
      assert.match(o.error!.message, /--input is not valid JSON/)
    })

    it("invalid --input JSON without --json: the message on stderr, nothing on stdout", async () => {
      const root = workspace()
      const run = await ugent(["invoke", "world.tools.file.read", "--input", "{"], { cwd: root })
      assert.strictEqual(run.code, 2)
      assert.strictEqual(run.stdout, "")
      assert.match(run.stderr, /--input is not valid JSON/)
    })

    it("an unknown trust level", async () => {
      const root = workspace()
      const run = await ugent(["list", "--trust", "L7", "--json"], { cwd: root })
      assert.strictEqual(run.code, 2)
      assert.strictEqual(outcome(run).error?._tag, "UsageError")
    })

    it("threat 42: a sandbox user that is root or not a uid:gid", async () => {
      const root = workspace()
      for (const user of ["0", "0:0", "alice", "-5"]) {
        const run = await ugent(["list", "--sandbox-user", user, "--json"], { cwd: root })
        assert.strictEqual(run.code, 2, user)
        assert.match(outcome(run).error!.message, /--sandbox-user .* is not an unprivileged user/)
      }
    })

    it("an unreadable recipe", async () => {
      const root = workspace()
      const run = await ugent(["list", "--recipe", join(root, "nope.json")], { cwd: root })
      assert.strictEqual(run.code, 2)
      assert.match(run.stderr, /nope\.json does not exist/)
    })

    it("a recipe that is not JSON, or not a recipe", async () => {
      const root = workspace({ "bad.json": "{ allow: [", "odd.json": '{"allow": ["*"], "trust": 3}' })
      const bad = await ugent(["list", "--recipe", "bad.json"], { cwd: root })
      assert.strictEqual(bad.code, 2)
      assert.match(bad.stderr, /bad\.json is not valid/)
      const odd = await ugent(["invoke", "world.tools.file.read", "--recipe", "odd.json", "--json"], { cwd: root })
      assert.strictEqual(odd.code, 2)
      assert.match(outcome(odd).error!.message, /odd\.json is not valid/)
    })

    it("an unknown flag, and a root that is not a directory", async () => {
      const root = workspace()
      const flag = await ugent(["list", "--frobnicate"], { cwd: root })
      assert.strictEqual(flag.code, 2)
      const notDir = await ugent(["list", "--root", join(root, "a.txt")], { cwd: root })
      assert.strictEqual(notDir.code, 2)
    })
  })

  describe("stores", () => {
    it.skipIf(!hasGit && process.env.CI === undefined)(
      `the SQLite stores under .ugent/ stay out of git status${hasGit ? "" : " (skipped: git is not installed)"}`,
      async () => {
        const root = workspace()
        execFileSync("git", ["init", "-q"], { cwd: root })
        execFileSync("git", ["add", "a.txt", "b.md"], { cwd: root })
        const run = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}'], { cwd: root })
        assert.strictEqual(run.code, 0, run.stderr)
        assert.isTrue(existsSync(join(root, ".ugent", "ugent.db")))
        assert.strictEqual(readFileSync(join(root, ".ugent", ".gitignore"), "utf8"), "*\n")
        const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
          cwd: root,
          encoding: "utf8"
        })
        assert.strictEqual(status, "A  a.txt\nA  b.md\n")
      }
    )

    it("--stores memory keeps traces and audit records out of the workspace", async () => {
      const root = workspace()
      const run = await ugent(
        ["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--stores", "memory"],
        {
          cwd: root
        }
      )
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isFalse(existsSync(join(root, ".ugent", "ugent.db")))
    })

    it("with UGENT_PROOF_KEY and --stores memory, nothing is written into the workspace", async () => {
      const root = workspace()
      const run = await ugent(
        ["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--stores", "memory"],
        {
          cwd: root,
          env: { UGENT_PROOF_KEY: "k".repeat(32) }
        }
      )
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isFalse(existsSync(join(root, ".ugent")))
    })

    it("threat 50: a read of an 85 KB file leaves a trace of its head, size and hash; --trace-payloads full keeps it whole", async () => {
      const big = `${"x".repeat(84)}\n`.repeat(1000)
      const root = workspace({ "big.txt": big })
      const traced = (args: ReadonlyArray<string>) =>
        ugent(["invoke", "world.tools.file.read", "--input", '{"path": "big.txt"}', "--json", ...args], { cwd: root })
      const outputs = () => {
        const db = new DatabaseSync(join(root, ".ugent", "ugent.db"), { readOnly: true })
        try {
          return db.prepare("SELECT output, clipped, bytes FROM ugent_traces ORDER BY started_at").all() as Array<{
            output: string
            clipped: string | null
            bytes: number
          }>
        } finally {
          db.close()
        }
      }
      const head = await traced([])
      assert.strictEqual(head.code, 0, head.stderr)
      const full = await traced(["--trace-payloads", "full"])
      assert.strictEqual(full.code, 0, full.stderr)
      const [clipped, whole] = outputs()
      assert.isAtMost(clipped!.output.length, 1536)
      const digest = JSON.parse(clipped!.clipped!) as { output: { size: number; sha256: string } }
      assert.isAbove(digest.output.size, 85_000)
      assert.match(digest.output.sha256, /^[0-9a-f]{64}$/)
      assert.isAbove(whole!.output.length, 85_000)
      assert.isNull(whole!.clipped)
      const wrong = await ugent(["list", "--trace-retention", "a week", "--json"], { cwd: root })
      assert.strictEqual(wrong.code, 2)
      assert.match(String((onlyJson(wrong).error as { message: string }).message), /--trace-retention a week/)
    })

    it("keeps a .gitignore the user already has in .ugent/", async () => {
      const root = workspace()
      mkdirSync(join(root, ".ugent"))
      writeFileSync(join(root, ".ugent", ".gitignore"), "ugent.db\n")
      const run = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}'], { cwd: root })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.strictEqual(readFileSync(join(root, ".ugent", ".gitignore"), "utf8"), "ugent.db\n")
    })
  })

  describe("shared services", () => {
    const redis = process.env.UGENT_REDIS_URL
    const pg = process.env.UGENT_PG_URL
    const skipRedis = redis === undefined && process.env.CI === undefined
    const skipPg = pg === undefined && process.env.CI === undefined

    it.skipIf(skipRedis)(
      `--redis shares a rate limit between two ugent processes${skipRedis ? " (skipped: UGENT_REDIS_URL is not set)" : ""}`,
      async () => {
        const root = workspace()
        const file = recipe(root, { toolRateLimits: { "world.tools.file.read": { perMinute: 1 } } })
        // A fresh caller id, so limits left in Redis by an earlier run do not count.
        const observer = `cli-test-${process.pid}-${Date.now()}`
        const args = ["--recipe", file, "--redis", redis!, "--observer", observer, "--stores", "memory", "--json"]
        const first = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', ...args], {
          cwd: root
        })
        assert.strictEqual(first.code, 0, first.stdout + first.stderr)
        const second = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "b.md"}', ...args], {
          cwd: root
        })
        assert.strictEqual(second.code, 1, second.stdout)
        assert.strictEqual(outcome(second).error?._tag, "RateLimited")
      }
    )

    it("threat 49: Redis down: --on-store-error fail refuses a limited call at once as unavailable, allow runs it; one log line, no stack", async () => {
      const root = workspace()
      // A port nothing listens on: one the system gave a listener, now closed.
      const port = await new Promise<number>((resolve) => {
        const server = createServer().listen(0, "127.0.0.1", () => {
          const address = server.address()
          server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
        })
      })
      const args = [
        "invoke",
        "world.tools.file.read",
        "--input",
        '{"path": "a.txt"}',
        "--redis",
        `redis://127.0.0.1:${port}`,
        "--rate-caller",
        "10/min+3",
        "--stores",
        "memory",
        "--json"
      ]
      const started = Date.now()
      const refused = await ugent([...args, "--on-store-error", "fail"], { cwd: root })
      const refusedMillis = Date.now() - started
      assert.strictEqual(refused.code, 1, refused.stdout + refused.stderr)
      const outcome = onlyJson(refused) as { error: { _tag: string; message: string }; kind: string }
      assert.strictEqual(outcome.error._tag, "RateLimiterUnavailable")
      assert.strictEqual(outcome.kind, "unavailable")
      assert.match(outcome.error.message, /check that Redis is running and reachable/)
      const allowed = await ugent(args, { cwd: root })
      assert.strictEqual(allowed.code, 0, allowed.stdout + allowed.stderr)
      for (const run of [refused, allowed]) {
        assert.lengthOf(run.stderr.match(/Redis at 127\.0\.0\.1:\d+ does not answer/g) ?? [], 1, run.stderr)
        assert.notMatch(run.stderr, /\n\s+at /, "no stack trace")
      }
      // Before, the limiter's connection failed the start (exit 2), or waited ~5 s per Redis command.
      assert.isBelow(refusedMillis, 15_000)
    })

    it.skipIf(skipPg)(
      `--stores postgres://… keeps the records in PostgreSQL, none under .ugent/${skipPg ? " (skipped: UGENT_PG_URL is not set)" : ""}`,
      async () => {
        const root = workspace()
        const run = await ugent(
          ["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--stores", pg!, "--json"],
          { cwd: root }
        )
        assert.strictEqual(run.code, 0, run.stdout + run.stderr)
        assert.isTrue(outcome(run).ok)
        assert.isFalse(existsSync(join(root, ".ugent", "ugent.db")))
      }
    )

    it("--stores with something else is a usage error", async () => {
      const root = workspace()
      const run = await ugent(["list", "--stores", "mysql://x", "--json"], { cwd: root })
      assert.strictEqual(run.code, 2)
      assert.match(outcome(run).error!.message, /memory, sqlite or a postgres:\/\/ URL/)
    })
  })
})
