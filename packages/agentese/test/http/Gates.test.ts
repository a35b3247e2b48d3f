/**
 * The gates of threats.md (25-30) over HTTP: offer and permission agree, no
 * request skips approval, the caller is the server's configuration whatever
 * the request claims, a denial leaves the server working, and loops stop.
 */

import { existsSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Trust } from "@ugent/core"
import { Effect } from "effect"
import { get, invokeUrl, post, serve } from "./fixture.ts"

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
    it.live("a recipe's requireApproval with no approver is denied", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { requireApproval: ["world.tools.file.read"] } })
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "ApprovalDenied")
        assert.strictEqual(r.body.error.reason, "no-approver")
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
        yield* post(
          invokeUrl(url, "world.tools.file.read"),
          { path: "a.txt", observer: { id: "admin", trust: 3 } },
          identityClaims
        )
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
