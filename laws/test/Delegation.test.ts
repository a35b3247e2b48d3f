/**
 * The law of delegation: a child never runs what its parent could not.
 * Generated parents (a level, a recipe), children (the level and the paths
 * they ask for) and calls: a sub-agent (`Agent.delegate` of
 * `@ugent/agentese`, driven by a scripted model) calls through the real
 * road, and every call that ran is one its parent's level and recipe allow;
 * what the child is offered is a part of what the parent is offered.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Agent, Invoke, Path, Recipe, Server } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { Family, Observer, Tool } from "@ugent/core"
import { Effect, Layer, Schema } from "effect"
import type { Prompt } from "effect/ai"

const Level = Schema.Literals([0, 1, 2, 3])
const Target = Schema.Literals([
  "world.tools.spy.l0",
  "world.tools.spy.l1",
  "world.tools.spy.l2",
  "world.tools.spy.l3",
  "world.tools.other.read"
])
/** What a deny or a raise names: one path, or a family's. */
const Narrow = Schema.Union([Target, Schema.Literals(["world.tools.other.*", "world.tools.spy.l*"])])
const Pattern = Schema.Literals([
  "*",
  "world.tools.*",
  "world.tools.spy.*",
  "world.tools.spy.l1",
  "world.tools.spy.l*",
  "world.tools.other.*"
])

/** Tools at every level that count their runs, by path. */
const spies = () => {
  const ran: Array<string> = []
  const spy = (name: string, path: string, trust: 0 | 1 | 2 | 3) =>
    Tool.make({
      name,
      description: `Counts a run of ${path}.`,
      trust,
      effects: trust === 0 ? { readsFs: true } : trust === 3 ? { callsShell: true } : { writesFs: true },
      input: Schema.Struct({}),
      output: Schema.Struct({ ok: Schema.Boolean }),
      run: () => Effect.sync(() => (ran.push(path), { ok: true }))
    })
  const families = [
    Family.make({
      name: "spy",
      prefix: "world.tools",
      tools: {
        "spy.l0": spy("spy.l0", "world.tools.spy.l0", 0),
        "spy.l1": spy("spy.l1", "world.tools.spy.l1", 1),
        "spy.l2": spy("spy.l2", "world.tools.spy.l2", 2),
        "spy.l3": spy("spy.l3", "world.tools.spy.l3", 3)
      }
    }),
    Family.make({
      name: "other",
      prefix: "world.tools",
      tools: { "other.read": spy("other.read", "world.tools.other.read", 0) }
    })
  ]
  return { ran, families }
}

const levelOf = (path: string): 0 | 1 | 2 | 3 => {
  const m = /\.l(\d)$/.exec(path)
  return m === null ? 0 : (Number(m[1]) as 0 | 1 | 2 | 3)
}

/** Whether the parent itself could have run the path: its recipe allows it, at a level the parent has. */
const parentCould = (trust: number, recipe: Recipe.Recipe, path: string): boolean => {
  const decision = Recipe.decide(recipe, path, levelOf(path))
  return decision._tag === "Allowed" && trust >= decision.requiredTrust
}

const userText = (prompt: Prompt.Prompt): string =>
  prompt.content
    .filter((m) => m.role === "user")
    .map((m) =>
      typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
    )
    .join("")

describe("delegation", () => {
  it.effect.prop(
    "a child never runs what its parent could not, and is offered no path its parent is not",
    {
      parentTrust: Level,
      parentAllow: Schema.optionalKey(Schema.Array(Pattern).check(Schema.isMinLength(1), Schema.isMaxLength(2))),
      parentDeny: Schema.Array(Narrow).check(Schema.isMaxLength(1)),
      raise: Schema.Array(Schema.Tuple([Narrow, Level])).check(Schema.isMaxLength(2)),
      childTrust: Level,
      childAllow: Schema.optionalKey(Schema.Array(Pattern).check(Schema.isMinLength(1), Schema.isMaxLength(2))),
      childDeny: Schema.Array(Narrow).check(Schema.isMaxLength(1)),
      calls: Schema.Array(Target).check(Schema.isMinLength(1), Schema.isMaxLength(6))
    },
    ({ parentTrust, parentAllow, parentDeny, raise, childTrust, childAllow, childDeny, calls }) =>
      Effect.gen(function* () {
        const root = mkdtempSync(join(tmpdir(), "ugent-delegation-"))
        const { ran, families } = spies()
        const recipe: Recipe.Recipe = {
          allow: parentAllow === undefined ? ["*"] : [...parentAllow],
          deny: [...parentDeny],
          minTrust: Object.fromEntries(raise)
        }
        // The child asks for every generated call in one response, then answers.
        const model = Scripted.layer((request) =>
          request.prompt.content.some((m) => m.role === "tool")
            ? Scripted.text("done")
            : userText(request.prompt).includes("child task")
              ? Scripted.calls(calls.map((path) => ({ name: Path.toProviderName(path), params: {} })))
              : Scripted.text("parent")
        )
        const road = Server.layer({
          root,
          stores: "memory",
          families: [...families],
          trust: parentTrust,
          recipe,
          loop: false,
          approver: () => Effect.succeed(true)
        })
        const output = yield* Agent.delegate({
          task: "child task",
          trust: childTrust,
          ...(childAllow === undefined ? {} : { allow: childAllow }),
          deny: childDeny
        }).pipe(
          Effect.provide(Layer.merge(road, model)),
          Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
        )
        assert.isAtMost(output.trust, parentTrust)
        for (const path of ran) assert.isTrue(parentCould(parentTrust, recipe, path), `the child ran ${path}`)
        // What the child is offered, by the check the road enforces, lies within the parent's offers.
        const child = Recipe.narrow(recipe, {
          ...(childAllow === undefined ? {} : { allow: childAllow }),
          deny: childDeny
        })
        const offered = (observer: Observer.ObserverShape, r: Recipe.Recipe) =>
          Effect.flatMap(Invoke.Invoker, (invoker) => invoker.list).pipe(
            Effect.provideService(Observer.Observer, observer),
            Effect.provideService(Recipe.CurrentRecipe, r),
            Effect.provide(Server.layer({ root: tmpdir(), stores: "memory", families: [...spies().families] })),
            Effect.map((offers) => offers.map((o) => o.path))
          )
        const parentOffers = yield* offered({ id: "parent", trust: parentTrust }, recipe)
        const childOffers = yield* offered({ id: "child", trust: output.trust }, child)
        for (const path of childOffers) assert.include(parentOffers, path)
      }),
    { timeout: 120_000, arbitrary: { runs: 50 } }
  )
})
