/**
 * A `Report` is the verdict of one law of one suite: passed, falsified (with
 * the shrunk input, the sides that differed, the seed and a replay token),
 * exhausted (the generator discarded too much), a replay that no longer
 * reproduces, or an error in the set-up. {@link format} renders it for a
 * person; a vitest test fails with that text.
 *
 * @since 0.1.0
 */
import { show } from "./internal/show.ts"
import * as Observation from "./Observation.ts"

/**
 * Where a law failed: the observed sides and what was wrong with them.
 *
 * @category models
 * @since 0.1.0
 */
export interface Difference {
  readonly sides: ReadonlyArray<{ readonly label: string; readonly observation: Observation.Observation }>
  /** For a property: what the side should have done. */
  readonly expected?: string | undefined
  /** What differed (`"the exits differ"`) or what is wrong. */
  readonly problem: string
}

interface Common {
  /** The name the user gave the instance: `"myTool"`. */
  readonly suite: string
  /** The rule set the law belongs to: `"category"`. */
  readonly ruleSet: string
  /** The law: `"associativity"`. */
  readonly law: string
  readonly seed: string | number
}

/**
 * @category models
 * @since 0.1.0
 */
export interface Passed extends Common {
  readonly _tag: "Passed"
  readonly runs: number
}

/**
 * @category models
 * @since 0.1.0
 */
export interface Falsified extends Common {
  readonly _tag: "Falsified"
  readonly runs: number
  readonly shrinks: number
  readonly initialInput: unknown
  readonly shrunkInput: unknown
  readonly difference: Difference
  /** Pass it back as `{ replay }` or `UGENT_LAWS_REPLAY` to rerun exactly this failure. */
  readonly replay: string
}

/**
 * @category models
 * @since 0.1.0
 */
export interface Exhausted extends Common {
  readonly _tag: "Exhausted"
  readonly runs: number
  readonly discards: number
}

/**
 * @category models
 * @since 0.1.0
 */
export interface ReplayMismatch extends Common {
  readonly _tag: "ReplayMismatch"
  readonly reason: string
}

/**
 * The check could not run: a missing service, a layer that failed, a defect
 * in the law's own code.
 *
 * @category models
 * @since 0.1.0
 */
export interface Errored extends Common {
  readonly _tag: "Errored"
  readonly error: string
}

/**
 * @category models
 * @since 0.1.0
 */
export type Report = Passed | Falsified | Exhausted | ReplayMismatch | Errored

/**
 * Whether a report is a pass.
 *
 * **Example** (A passed report)
 * ```ts
 * import { Report } from "@ugent/laws"
 * console.log(Report.isPassed({ _tag: "Passed", suite: "s", ruleSet: "category", law: "associativity", seed: 1, runs: 100 }))
 * // => true
 * ```
 *
 * @category guards
 * @since 0.1.0
 */
export const isPassed = (self: Report): self is Passed => self._tag === "Passed"

const prefix = "ul1."

/**
 * Encodes a replay token naming the suite and the law, so that one token
 * set in the environment replays exactly one law.
 *
 * **Example** (A replay token)
 * ```ts
 * import { Report } from "@ugent/laws"
 * console.log(Report.encodeReplay("myTool", "category: associativity", "[0]").startsWith("ul1."))
 * // => true
 * ```
 *
 * @category replay
 * @since 0.1.0
 */
export const encodeReplay = (suite: string, law: string, replay: string): string =>
  prefix + Buffer.from(JSON.stringify([suite, law, replay]), "utf8").toString("base64url")

/**
 * Decodes a replay token made by {@link encodeReplay}; `undefined` when it is
 * not one.
 *
 * **Example** (A round trip)
 * ```ts
 * import { Report } from "@ugent/laws"
 * console.log(Report.decodeReplay(Report.encodeReplay("myTool", "category: associativity", "[0]")))
 * // => { suite: 'myTool', law: 'category: associativity', replay: '[0]' }
 * ```
 *
 * @category replay
 * @since 0.1.0
 */
export const decodeReplay = (
  token: string
): { readonly suite: string; readonly law: string; readonly replay: string } | undefined => {
  if (!token.startsWith(prefix)) return undefined
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token.slice(prefix.length), "base64url").toString("utf8"))
    if (Array.isArray(parsed) && parsed.length === 3 && parsed.every((p) => typeof p === "string")) {
      const [suite, law, replay] = parsed as [string, string, string]
      return { suite, law, replay }
    }
  } catch {
    return undefined
  }
  return undefined
}

/**
 * The full name of a report's law: `"category: associativity"`.
 *
 * **Example** (The full name of a law)
 * ```ts
 * import { Report } from "@ugent/laws"
 * console.log(Report.lawName({ ruleSet: "arrow", law: "arr id = id" }))
 * // => arrow: arr id = id
 * ```
 *
 * @category formatting
 * @since 0.1.0
 */
export const lawName = (self: Pick<Common, "ruleSet" | "law">): string => `${self.ruleSet}: ${self.law}`

/**
 * Renders a report for a person: one line for a pass; for a falsified law,
 * the sides that differed and how, the shrunk input, the seed and the replay
 * token.
 *
 * **Example** (A passed law)
 * ```ts
 * import { Report } from "@ugent/laws"
 * console.log(Report.format({ _tag: "Passed", suite: "inc", ruleSet: "category", law: "associativity", seed: 7, runs: 100 }))
 * // => inc / category: associativity: passed 100 run(s) (seed 7)
 * ```
 *
 * @category formatting
 * @since 0.1.0
 */
export const format = (self: Report): string => {
  const title = `${self.suite} / ${lawName(self)}`
  switch (self._tag) {
    case "Passed":
      return `${title}: passed ${self.runs} run(s) (seed ${self.seed})`
    case "Exhausted":
      return `${title}: exhausted: the generator discarded ${self.discards} input(s) after ${self.runs} run(s) (seed ${self.seed}). Loosen the input's filters.`
    case "ReplayMismatch":
      return `${title}: the replay token no longer reproduces a failure (${self.reason}). The law or the tool changed since it was printed; rerun with the seed instead.`
    case "Errored":
      return `${title}: could not be checked (seed ${self.seed}): ${self.error}`
    case "Falsified": {
      const d = self.difference
      const head =
        d.sides.length === 2
          ? `  ${d.sides[0]!.label}  <->  ${d.sides[1]!.label}: ${d.problem}`
          : `  ${d.sides[0]?.label ?? "side"}: expected ${d.expected ?? "the property to hold"}; ${d.problem}`
      return [
        `${title}: falsified after ${self.runs} run(s) and ${self.shrinks} shrink(s)`,
        head,
        `  shrunk input: ${show(self.shrunkInput)}`,
        ...d.sides.map((s) => `  ${s.label} => ${Observation.format(s.observation)}`),
        `  seed: ${self.seed} (rerun every law with UGENT_LAWS_SEED=${self.seed} or { seed: ${JSON.stringify(self.seed)} })`,
        `  replay: ${self.replay} (set UGENT_LAWS_REPLAY to it, or pass it as { replay }, to rerun exactly this failure)`
      ].join("\n")
    }
  }
}
