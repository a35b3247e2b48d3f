/**
 * The gates of threats.md (25-30) over HTTP: offer and permission agree, no
 * request skips approval, the caller is the server's configuration whatever
 * the request claims, a denial leaves the server working, and loops stop.
 */

import { existsSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Trust } from "@ugent/core"
import { Effect, Fiber } from "effect"
import { get, invokeUrl, post, raw, serve } from "./fixture.ts"

const identityClaims = {
  authorization: "Bearer admin",
  "x-ugent-trust": "L3",
  "x-ugent-observer": "admin",
  "x-forwarded-user": "admin"
}

const approverRecording = (answer: boolean) => {
  const asked: Array<Trust.ApprovalRequest> = []
  return {
    asked,
    approver: (request: Trust.ApprovalRequest) =>
      Effect.sync(() => {
        asked.push(request)
        return answer
      })
  }
}

describe("Http gates", () => {
  describe("offer and permission (threat 28)", () => {
    it.live("a path the recipe denies is neither listed, described nor callable", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { deny: ["world.tools.search.grep"] } })
        const listed = (yield* get(`${url}/v1/paths`)).body.paths.map((p: { path: string }) => p.path)
        assert.notInclude(listed, "world.tools.search.grep")
        assert.include(listed, "world.tools.file.read")
        assert.strictEqual((yield* get(`${url}/v1/paths/world.tools.search.grep`)).status, 404)
        const call = yield* post(invokeUrl(url, "world_tools_search_grep"), { pattern: "alpha" })
        assert.strictEqual(call.status, 403)
        assert.strictEqual(call.body.error._tag, "PolicyDenied")
      })
    )

    it.live("every listed path is callable, and a pipeline cannot smuggle a denied step", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { deny: ["world.tools.file.list"] } })
        const call = yield* post(invokeUrl(url, "world.tools.file.read >> world.tools.file.list"), { path: "a.txt" })
        assert.strictEqual(call.status, 403)
        assert.strictEqual(call.body.error._tag, "PolicyDenied")
        assert.strictEqual(call.body.path, "world.tools.file.list")
      })
    )
  })

  describe("approval cannot be skipped (threats 25, 27)", () => {
    it.live("a recipe's requireApproval with no approver is refused, pending an answer", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.read"] } })
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "ApprovalPending")
        assert.strictEqual(r.body.error.reason, "no-channel")
      })
    )

    it.live("the server's approver is asked, and its no is a 403", () =>
      Effect.gen(function* () {
        const { asked, approver } = approverRecording(false)
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.read"] }, approver })
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error.reason, "denied")
        assert.strictEqual(asked.length, 1)
        assert.strictEqual(asked[0]!.tool, "world.tools.file.read")
      })
    )

    it.live("the server's approver's yes lets the call run", () =>
      Effect.gen(function* () {
        const { asked, approver } = approverRecording(true)
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.read"] }, approver })
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual(r.status, 200)
        assert.strictEqual(asked.length, 1)
      })
    )

    it.live("an L2 write outside the writable globs asks the approver; refused, nothing is written", () =>
      Effect.gen(function* () {
        const { asked, approver } = approverRecording(false)
        const { url, root } = yield* serve({ trust: 2, writable: ["notes/**"], approver })
        const r = yield* post(invokeUrl(url, "world.tools.file.write"), { path: "c.txt", content: "x" })
        assert.strictEqual(r.status, 403, JSON.stringify(r.body))
        assert.strictEqual(r.body.error._tag, "ApprovalDenied")
        assert.strictEqual(asked.length, 1)
        assert.isFalse(existsSync(join(root, "c.txt")))
      })
    )

    it.live("an approval required by a step of a pipeline is asked too", () =>
      Effect.gen(function* () {
        const { asked, approver } = approverRecording(false)
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.list"] }, approver })
        const r = yield* post(invokeUrl(url, "world.tools.file.read >> world.tools.file.list"), { path: "a.txt" })
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "ApprovalDenied")
        assert.deepStrictEqual(
          asked.map((a) => a.tool),
          ["world.tools.file.list"]
        )
      })
    )
  })

  describe("an agent cannot answer its own approval (issue 24 #2)", () => {
    /** Spellings of the list route the router matches (or may), as sent on the wire. */
    const listSpellings = [
      "/v1/pending",
      "/V1/pending",
      "/v1/PENDING",
      "/v1//pending",
      "//v1/pending",
      "/v1/%70ending",
      "/%761/pending",
      "/v1/pending/",
      "/v1/./pending",
      "/v1/x/../pending",
      "/v1/%2Fpending",
      "/v1/pending?x=1",
      "/v1/pending;x"
    ]
    const answerSpellings = (id: string) => [
      ...listSpellings.filter((s) => !s.includes("?")).map((s) => `${s.replace(/\/$/, "")}/${id}`),
      `/v1/pending//${id}`,
      `/v1/pending%2F${id}`,
      `/v1/pending/${id}/`,
      `/v1/pending/${id}?answer=approve`,
      `/v1/pending/./${id}`
    ]
    const operator = { authorization: "Bearer operator-secret" }
    /** Refused for the credential (401, 403), or a spelling no route matches (404 RouteNotFound). */
    const refused = (r: { status: number; body: { error?: { _tag?: string } } }) =>
      r.status === 401 ||
      r.status === 403 ||
      (r.status === 404 && ["RouteNotFound", "NotFound"].includes(r.body?.error?._tag ?? "NotFound"))
    const json = { "content-type": "application/json" }

    for (const agentToken of ["agent-secret", undefined]) {
      it.live(
        `threat: an agent lists and approves its own write through another spelling of /v1/pending (${agentToken === undefined ? "no agent token" : "with an agent token"})`,
        () =>
          Effect.gen(function* () {
            const { url, root } = yield* serve({
              trust: 1,
              recipe: { requireApproval: ["world.tools.file.write"] },
              token: agentToken,
              approverToken: "operator-secret",
              approvalTimeout: "60 seconds"
            })
            const agent: Record<string, string> =
              agentToken === undefined ? {} : { authorization: `Bearer ${agentToken}` }
            const write = yield* Effect.forkChild(
              post(invokeUrl(url, "world.tools.file.write"), { path: "c.txt", content: "x" }, agent)
            )
            let id: string | undefined
            for (let i = 0; i < 200 && id === undefined; i++) {
              yield* Effect.sleep("25 millis")
              id = (yield* get(`${url}/v1/pending`, operator)).body.questions?.[0]?.id
            }
            assert.isDefined(id)
            // The agent presents its own credential, or none, or a forged one.
            const credentials = [agent, {}, { authorization: "Bearer agent-secret" }, { authorization: "Bearer x" }]
            const got: Array<string> = []
            for (const headers of credentials) {
              for (const path of listSpellings) {
                const r = yield* raw(url, { path, headers })
                if (!refused(r) || JSON.stringify(r.body).includes(id!)) got.push(`GET ${path} ${r.status}`)
              }
              for (const path of answerSpellings(id!)) {
                const body = JSON.stringify({ answer: "approve" })
                const r = yield* raw(url, { method: "POST", path, headers: { ...json, ...headers }, chunks: [body] })
                if (!refused(r)) got.push(`POST ${path} ${r.status} ${JSON.stringify(r.body)}`)
              }
            }
            assert.deepStrictEqual(got, [])
            // The question still waits for the person, who refuses it: nothing is written.
            const waiting = yield* get(`${url}/v1/pending`, operator)
            assert.deepStrictEqual(
              waiting.body.questions.map((q: { id: string }) => q.id),
              [id]
            )
            const denied = yield* post(`${url}/v1/pending/${id}`, { answer: "deny" }, operator)
            assert.strictEqual(denied.status, 200)
            const r = yield* Fiber.join(write)
            assert.strictEqual(r.status, 403)
            assert.strictEqual(r.body.error._tag, "ApprovalDenied")
            assert.isFalse(existsSync(join(root, "c.txt")))
          }),
        30_000
      )
    }

    it.live("threat: with no approver's token configured, no spelling of /v1/pending answers anyone", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.write"] } })
        for (const path of listSpellings) {
          const r = yield* raw(url, { path })
          assert.isTrue(refused(r), `${path}: ${r.status} ${JSON.stringify(r.body)}`)
        }
        for (const path of answerSpellings("q-1")) {
          const r = yield* raw(url, { method: "POST", path, headers: json, chunks: ['{"answer":"approve"}'] })
          assert.isTrue(refused(r), `${path}: ${r.status} ${JSON.stringify(r.body)}`)
        }
      })
    )
  })

  describe("the caller is the server's configuration (threats 26, 29)", () => {
    it.live("headers and body fields claiming identity or trust do not raise the caller", () =>
      Effect.gen(function* () {
        const { url, root } = yield* serve({ trust: 0 })
        const r = yield* post(
          invokeUrl(url, "world.tools.file.write"),
          { path: "c.txt", content: "x", trust: 3, observer: { id: "admin", trust: 3 }, observerId: "admin" },
          identityClaims
        )
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "TrustDenied")
        assert.strictEqual(r.body.error.actual, 0)
        assert.isFalse(existsSync(join(root, "c.txt")))
        const listing = yield* get(`${url}/v1/paths`, identityClaims)
        assert.deepStrictEqual(listing.body.observer, { id: "local", trust: 0 })
      })
    )

    it.live("the approver sees the configured observer, not the one the input names", () =>
      Effect.gen(function* () {
        const { asked, approver } = approverRecording(true)
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.read"] }, approver })
        // An observer among the arguments is a key file.read does not take: refused before anyone is asked.
        const claimed = yield* post(
          invokeUrl(url, "world.tools.file.read"),
          { path: "a.txt", observer: { id: "admin", trust: 3 } },
          identityClaims
        )
        assert.deepStrictEqual([claimed.status, claimed.body.error._tag], [400, "UnknownArguments"])
        assert.strictEqual(asked.length, 0)
        yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" }, identityClaims)
        assert.strictEqual(asked.length, 1)
        assert.strictEqual(asked[0]!.observer.id, "local")
        assert.strictEqual(asked[0]!.observer.trust, 0)
      })
    )
  })

  describe("a denial does not break the next request (threat 25)", () => {
    it.live("after a 403 and a 400 the server still answers a good call", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.list"] } })
        assert.strictEqual((yield* post(invokeUrl(url, "world.tools.file.list"), {})).status, 403)
        assert.strictEqual((yield* post(invokeUrl(url, "world.tools.file.read"), "{oops")).status, 400)
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual(r.status, 200)
      })
    )
  })

  describe("loops (threat 30)", () => {
    it.live("a call that gave the same result three times, nothing written, is refused with LoopDetected", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const call = () => post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual((yield* call()).status, 200)
        assert.strictEqual((yield* call()).status, 200)
        assert.strictEqual((yield* call()).status, 200)
        const fourth = yield* call()
        assert.strictEqual(fourth.status, 429)
        assert.strictEqual(fourth.body.error._tag, "LoopDetected")
        const other = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "b.md" })
        assert.strictEqual(other.status, 200)
      })
    )
  })
})
