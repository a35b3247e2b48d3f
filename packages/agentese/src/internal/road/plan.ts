/**
 * The road's first stage: a request becomes steps, each resolved to its
 * registered tool and decided by the recipe. Every step is resolved and
 * decided before any runs, so a pipeline whose third step is denied runs
 * nothing; a denied step is still a call, refused (and recorded) later.
 *
 * @internal
 */
import * as Parse from "../../Parse.ts"
import * as Recipe from "../../Recipe.ts"
import type { Entry, RegistryShape, UnknownPath } from "../../Registry.ts"

export interface Step {
  readonly entry: Entry
  readonly decision: Recipe.Decision
  /** Arguments written on the step itself (`a >> b --x=1`). */
  readonly args: Readonly<Record<string, unknown>>
}

/** A fan-out step: its calls, each resolved and decided. */
export interface Fanout {
  readonly all: ReadonlyArray<Step>
  readonly mode: "collect-all" | "fail-fast"
}

export type Planned =
  | { readonly _tag: "Planned"; readonly steps: ReadonlyArray<Step | Fanout> }
  | { readonly _tag: "Unplanned"; readonly path: string; readonly error: Parse.ParseError | UnknownPath }

export const plan = (
  registry: RegistryShape,
  recipe: Recipe.Recipe,
  request: { readonly path?: string | undefined; readonly steps?: ReadonlyArray<Parse.Step> | undefined }
): Planned => {
  let parsed: ReadonlyArray<Parse.Step>
  // A plain registered path is one step: nothing to parse.
  const direct = request.steps === undefined && request.path !== undefined ? registry.get(request.path) : undefined
  if (direct !== undefined) {
    return {
      _tag: "Planned",
      steps: [
        {
          entry: direct,
          decision: Recipe.decide(recipe, direct.path, direct.level?.min ?? direct.tool.trust),
          args: {}
        }
      ]
    }
  }
  if (request.steps !== undefined) {
    parsed = request.steps
  } else {
    const result = Parse.pipeline(request.path ?? "")
    if (result._tag === "Left") return { _tag: "Unplanned", path: request.path ?? "", error: result.left }
    parsed = result.right.steps
  }
  const steps: Array<Step | Fanout> = []
  for (const step of parsed) {
    const calls: Array<Step> = []
    for (const call of Parse.callsOf(step)) {
      const entry = registry.get(call.path)
      if (entry === undefined) return { _tag: "Unplanned", path: call.path, error: registry.unknown(call.path) }
      calls.push({
        entry,
        decision: Recipe.decide(recipe, entry.path, entry.level?.min ?? entry.tool.trust),
        args: call.args
      })
    }
    steps.push(step.all === undefined ? calls[0]! : { all: calls, mode: step.mode ?? "collect-all" })
  }
  return { _tag: "Planned", steps }
}
