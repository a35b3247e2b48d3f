/**
 * `self.tools.clarify`: a model asks the person a question (with choices,
 * optionally) and waits, through the human channel of its projection (MCP
 * elicitation, the HTTP pending questions, the terminal). No answer in time
 * is a clear result, not an error: the model learns it must decide alone.
 *
 * @since 0.2.0
 */
import { Observer, Tool } from "@ugent/core"
import { Duration, Effect, Schema } from "effect"
import * as Human from "../Human.ts"

const Output = Schema.Union([
  Schema.Struct({ answered: Schema.Literal(true), answer: Schema.String }),
  Schema.Struct({
    answered: Schema.Literal(false),
    reason: Schema.Literals(["timeout", "no-channel", "declined"]),
    message: Schema.String
  })
])

const noAnswer = {
  timeout: "No answer came in time. Decide with what you know, say which assumption you made, or ask again later.",
  "no-channel":
    "Nobody can be asked here (this client cannot show questions). Decide with what you know and say which assumption you made.",
  declined: "The person declined to answer. Do not ask the same again; decide with what you know."
} as const

/**
 * The tool.
 *
 * @category tools
 * @since 0.2.0
 */
export const clarify = Tool.make({
  name: "clarify",
  description:
    "Ask the person a question and wait for the answer (optionally one of the given choices). Use it when a decision is theirs to make.",
  input: Schema.Struct({
    question: Schema.String.check(Schema.isNonEmpty()),
    choices: Schema.optionalKey(Schema.Array(Schema.String)),
    timeoutSeconds: Schema.optionalKey(
      Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 600 })).annotate({
        description: "How long to wait (default 120, at most 600)."
      })
    )
  }),
  output: Output,
  run: (input) =>
    Effect.gen(function* () {
      const observer = yield* Effect.serviceOption(Observer.Observer)
      const timeout =
        input.timeoutSeconds === undefined ? yield* Human.QuestionTimeout : Duration.seconds(input.timeoutSeconds)
      const answer = yield* Human.ask(
        {
          kind: "clarify",
          text: input.question,
          ...(input.choices !== undefined ? { choices: input.choices } : {}),
          observerId: observer._tag === "Some" ? observer.value.id : "anonymous"
        },
        timeout
      )
      switch (answer._tag) {
        case "Answered":
          return { answered: true as const, answer: answer.answer }
        case "Declined":
          return { answered: false as const, reason: "declined" as const, message: noAnswer.declined }
        case "NoAnswer":
          return { answered: false as const, reason: answer.reason, message: noAnswer[answer.reason] }
      }
    })
})
