import { assert, describe, it } from "@effect/vitest"
import { Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"

const tool = (name: string, trust: Trust.TrustLevel, effects: Partial<Tool.Effects> = {}) =>
  Tool.make({
    name,
    description: `${name} at L${trust}`,
    trust,
    effects: trust > 0 ? { writesFs: true, ...effects } : effects,
    input: Schema.Struct({ path: Schema.optionalKey(Schema.String), command: Schema.optionalKey(Schema.String) }),
    output: Schema.String,
    run: () => Effect.succeed(`${name} ran`)
  })

const observer = (trust: Trust.TrustLevel) => Observer.layer({ id: `o${trust}`, trust })
const approveAll = Trust.approverLayer(() => Effect.succeed(true))
const denyAll = Trust.approverLayer(() => Effect.succeed(false))
const tagOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit)
    ? "Success"
    : Option.getOrElse(
        Option.map(Exit.findErrorOption(exit), (e) => (e as { _tag: string })._tag),
        () => "Defect"
      )

describe("Trust", () => {
  describe("grant", () => {
    it.effect("provides the capabilities of levels 0..level", () =>
      Effect.gen(function* () {
        const ctx = yield* Layer.build(Trust.grant(2))
        assert.isTrue(Option.isSome(yield* Effect.serviceOption(Trust.L0).pipe(Effect.provideContext(ctx))))
        assert.isTrue(Option.isSome(yield* Effect.serviceOption(Trust.L2).pipe(Effect.provideContext(ctx))))
        assert.isTrue(Option.isNone(yield* Effect.serviceOption(Trust.L3).pipe(Effect.provideContext(ctx))))
      })
    )
  })

  describe("gate", () => {
    const table: ReadonlyArray<readonly [Trust.TrustLevel, Trust.TrustLevel, string]> = [
      // [tool level, observer level, outcome without an approver]
      [0, 0, "Success"],
      [1, 0, "TrustDenied"],
      [1, 1, "Success"],
      [2, 1, "TrustDenied"],
      [2, 2, "ApprovalDenied"],
      [2, 3, "Success"],
      [3, 2, "TrustDenied"],
      [3, 3, "Success"]
    ]
    for (const [toolLevel, observerLevel, outcome] of table) {
      it.effect(`an L${toolLevel} tool called by an L${observerLevel} observer: ${outcome}`, () =>
        Effect.gen(function* () {
          const exit = yield* Effect.exit(Trust.gate(tool("t", toolLevel)).run({}))
          assert.strictEqual(tagOf(exit), outcome)
        }).pipe(Effect.provide(observer(observerLevel)))
      )
    }

    it.effect("the L2 confirmation branch runs (and approval lets the call through)", () =>
      Effect.gen(function* () {
        const asked = yield* Ref.make<Array<Trust.ApprovalRequest>>([])
        const approver = Trust.approverLayer((req) =>
          Effect.as(
            Ref.update(asked, (xs) => [...xs, req]),
            true
          )
        )
        const out = yield* Trust.gate(tool("publish", 2))
          .run({})
          .pipe(Effect.provide([observer(2), approver]))
        assert.strictEqual(out, "publish ran")
        const requests = yield* Ref.get(asked)
        assert.strictEqual(requests.length, 1)
        assert.strictEqual(requests[0]!.reason, "confirmation")
        assert.strictEqual(requests[0]!.observer.id, "o2")
      })
    )

    it.effect("a refusal is ApprovalDenied with reason denied", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(Trust.gate(tool("publish", 2)).run({}))
        assert.strictEqual(error._tag, "ApprovalDenied")
        assert.strictEqual(error._tag === "ApprovalDenied" && error.reason, "denied")
      }).pipe(Effect.provide([observer(2), denyAll]))
    )

    it.effect("an approval that does not come in time is a denial", () =>
      Effect.gen(function* () {
        const never = Trust.approverLayer(() => Effect.never)
        const fiber = yield* Effect.forkChild(
          Effect.flip(Trust.gate(tool("publish", 2)).run({})).pipe(Effect.provide([observer(2), never]))
        )
        yield* TestClock.adjust("29 seconds")
        assert.isUndefined(fiber.pollUnsafe())
        yield* TestClock.adjust("2 seconds")
        const error = yield* Fiber.join(fiber)
        assert.strictEqual(error._tag === "ApprovalDenied" && error.reason, "timeout")
      })
    )

    it.effect("the approval timeout is configurable", () =>
      Effect.gen(function* () {
        const approver = Trust.approverLayer(() => Effect.as(Effect.sleep("2 seconds"), true))
        const fiber = yield* Effect.forkChild(
          Effect.exit(Trust.gate(tool("publish", 2)).run({})).pipe(
            Effect.provide([observer(2), approver]),
            Effect.provideService(Trust.ApprovalTimeout, Duration.seconds(1))
          )
        )
        yield* TestClock.adjust("3 seconds")
        assert.strictEqual(tagOf(yield* Fiber.join(fiber)), "ApprovalDenied")
      })
    )

    it.effect("an irreversible tool asks for approval even at L3", () =>
      Effect.gen(function* () {
        const drop = tool("db.drop", 3, { irreversible: true })
        assert.strictEqual(
          tagOf(yield* Effect.exit(Trust.gate(drop).run({}).pipe(Effect.provide(denyAll)))),
          "ApprovalDenied"
        )
        assert.strictEqual(
          tagOf(yield* Effect.exit(Trust.gate(drop).run({}).pipe(Effect.provide(approveAll)))),
          "Success"
        )
      }).pipe(Effect.provide(observer(3)))
    )

    it.effect("a denial does not break the next call", () =>
      Effect.gen(function* () {
        const gated = Trust.gate(tool("publish", 2))
        const first = yield* Effect.exit(gated.run({}).pipe(Effect.provide([observer(2), denyAll])))
        const second = yield* Effect.exit(gated.run({}).pipe(Effect.provide([observer(2), approveAll])))
        assert.strictEqual(tagOf(first), "ApprovalDenied")
        assert.strictEqual(tagOf(second), "Success")
      })
    )

    it.effect("the observer's level comes from the Observer service, never from the input", () =>
      Effect.gen(function* () {
        const gated = Trust.gate(tool("publish", 3))
        const exit = yield* Effect.exit(gated.run({ trust: 3, observer: { trust: 3 } } as never))
        assert.strictEqual(tagOf(exit), "TrustDenied")
      }).pipe(Effect.provide(observer(1)))
    )

    describe("forbidden rules", () => {
      const cases: ReadonlyArray<readonly [string, Record<string, string>]> = [
        ["secrets", { path: ".env" }],
        ["secrets", { path: "home/.npmrc" }],
        ["secrets", { path: "home/.ssh/id_rsa" }],
        ["secrets", { path: "certs/server.pem" }],
        ["secrets", { path: "config/.env.production" }],
        ["git-internals", { path: ".git/hooks/pre-commit" }],
        ["git-internals", { path: "sub/.git/config" }],
        ["destructive-shell", { command: "rm -rf /" }],
        ["destructive-shell", { command: "cd x && rm -fr ~ " }],
        ["destructive-shell", { command: "mkfs.ext4 /dev/sda1" }]
      ]
      for (const [rule, input] of cases) {
        it.effect(`${rule}: ${JSON.stringify(input)} is refused even at L3`, () =>
          Effect.gen(function* () {
            const error = yield* Effect.flip(Trust.gate(tool("any", 3)).run(input))
            assert.strictEqual(error._tag, "Forbidden")
            assert.strictEqual(error._tag === "Forbidden" && error.rule, rule)
          }).pipe(Effect.provide([observer(3), approveAll]))
        )
      }

      it.effect("ordinary paths pass", () =>
        Effect.gen(function* () {
          for (const path of [
            "src/env.ts",
            "README.md",
            ".github/workflows/ci.yml",
            "docs/secretary.md".replace("secretary", "minutes")
          ]) {
            assert.strictEqual(yield* Trust.gate(tool("read", 0)).run({ path }), "read ran")
          }
        }).pipe(Effect.provide(observer(0)))
      )

      it.effect("rules can be added, and the defaults stay", () =>
        Effect.gen(function* () {
          const noTmp: Trust.ForbiddenRule = {
            name: "no-tmp",
            check: ({ input }) => (JSON.stringify(input).includes("/tmp") ? "no /tmp" : undefined)
          }
          const layer = Trust.withForbiddenRules([noTmp])
          const a = yield* Effect.flip(Trust.gate(tool("read", 0)).run({ path: "/tmp/x" }).pipe(Effect.provide(layer)))
          const b = yield* Effect.flip(Trust.gate(tool("read", 0)).run({ path: ".env" }).pipe(Effect.provide(layer)))
          assert.strictEqual(a._tag === "Forbidden" && a.rule, "no-tmp")
          assert.strictEqual(b._tag === "Forbidden" && b.rule, "secrets")
        }).pipe(Effect.provide(observer(0)))
      )
    })
  })

  describe("escalate", () => {
    const writeAnywhere = Tool.make({
      name: "write",
      description: "Writes; outside `ok/` it needs L2.",
      trust: 1,
      effects: { writesFs: true },
      input: Schema.Struct({ path: Schema.String }),
      output: Schema.String,
      failure: Schema.Union([ToolError.TrustDenied, ToolError.ApprovalDenied]),
      run: ({ path }) =>
        Effect.as(
          path.startsWith("ok/") ? Effect.void : Trust.escalate("write", 2, `${path} is outside the writable globs`),
          "written"
        )
    })

    it.effect("under a gate, checks the observer and confirms at L2", () =>
      Effect.gen(function* () {
        const gated = Trust.gate(writeAnywhere)
        const inside = yield* Effect.exit(gated.run({ path: "ok/a" }).pipe(Effect.provide(observer(1))))
        const outsideL1 = yield* Effect.exit(gated.run({ path: "etc/a" }).pipe(Effect.provide(observer(1))))
        const outsideL2 = yield* Effect.exit(gated.run({ path: "etc/a" }).pipe(Effect.provide([observer(2), denyAll])))
        const outsideL2ok = yield* Effect.exit(
          gated.run({ path: "etc/a" }).pipe(Effect.provide([observer(2), approveAll]))
        )
        const outsideL3 = yield* Effect.exit(gated.run({ path: "etc/a" }).pipe(Effect.provide([observer(3), denyAll])))
        assert.deepStrictEqual([inside, outsideL1, outsideL2, outsideL2ok, outsideL3].map(tagOf), [
          "Success",
          "TrustDenied",
          "ApprovalDenied",
          "Success",
          "Success"
        ])
      })
    )

    it.effect("without a gate, checks the granted capability", () =>
      Effect.gen(function* () {
        const l1 = yield* Effect.exit(writeAnywhere.run({ path: "etc/a" }).pipe(Effect.provide(Trust.grant(1))))
        const l2 = yield* Effect.exit(writeAnywhere.run({ path: "etc/a" }).pipe(Effect.provide(Trust.grant(2))))
        assert.deepStrictEqual([tagOf(l1), tagOf(l2)], ["TrustDenied", "Success"])
      })
    )
  })

  describe("approval waits", () => {
    it.effect("a human approver answering through a Deferred", () =>
      Effect.gen(function* () {
        const answer = yield* Deferred.make<boolean>()
        const approver = Trust.approverLayer(() => Deferred.await(answer))
        const fiber = yield* Effect.forkChild(
          Trust.gate(tool("publish", 2))
            .run({})
            .pipe(Effect.provide([observer(2), approver]))
        )
        yield* TestClock.adjust("5 seconds")
        yield* Deferred.succeed(answer, true)
        assert.strictEqual(yield* Fiber.join(fiber), "publish ran")
      })
    )
  })

  describe("read-only", () => {
    it("assertReadOnly accepts L0 and refuses writers", () => {
      assert.doesNotThrow(() => Trust.assertReadOnly(tool("r", 0)))
      assert.throws(() => Trust.assertReadOnly(tool("w", 1)), /not read-only/)
    })
  })

  it("parse reads levels", () => {
    assert.deepStrictEqual(
      [Trust.parse("L2"), Trust.parse("3"), Trust.parse(0), Trust.parse("L9")],
      [Option.some(2), Option.some(3), Option.some(0), Option.none()]
    )
  })
})
