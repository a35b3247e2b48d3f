import { assert, describe, it } from "@effect/vitest"
import { Boundary, ReadProof, Tool, Trust } from "@ugent/core"
import { Effect, Exit, Schema } from "effect"

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { path: Schema.String }) {
  override get message() {
    return `File not found: ${this.path}. Check the path with file.list.`
  }
}

const read = Tool.make({
  name: "file.read",
  description: "Reads a file.",
  input: Schema.Struct({ path: Schema.String, limit: Schema.optionalKey(Schema.Int) }),
  output: Schema.Struct({ content: Schema.String, proof: ReadProof.ReadProofFromToken }),
  failure: NotFound,
  run: ({ path }) =>
    path === "a.txt"
      ? Effect.map(ReadProof.issue({ path: "/ws/a.txt", content: "A", coverage: { _tag: "Whole" } }), (proof) => ({
          content: "A",
          proof
        }))
      : Effect.fail(new NotFound({ path }))
})

describe("Boundary", () => {
  describe("runJson", () => {
    it.effect("decodes, runs and encodes the output (a proof becomes a token)", () =>
      Effect.gen(function* () {
        const r = yield* Boundary.runJson(read, { path: "a.txt" })
        assert.isTrue(r.ok)
        const result = (r as { result: { content: string; proof: string } }).result
        assert.strictEqual(result.content, "A")
        assert.match(result.proof, /^rp1\./)
        assert.strictEqual(JSON.stringify(r), JSON.stringify(JSON.parse(JSON.stringify(r))))
      }).pipe(Effect.provide(Trust.grant(0)))
    )

    it.effect("a typed failure is encoded with its tag, fields and message", () =>
      Effect.gen(function* () {
        const r = yield* Boundary.runJson(read, { path: "b.txt" })
        assert.deepStrictEqual(r, {
          ok: false,
          error: { _tag: "NotFound", path: "b.txt", message: "File not found: b.txt. Check the path with file.list." }
        })
      }).pipe(Effect.provide(Trust.grant(0)))
    )

    it.effect("bad input is InvalidInput naming every issue", () =>
      Effect.gen(function* () {
        const r = yield* Boundary.runJson(read, { path: 1, limit: "x" })
        assert.isFalse(r.ok)
        const error = (r as { error: { _tag: string; message: string } }).error
        assert.strictEqual(error._tag, "InvalidInput")
        assert.match(error.message, /path/)
        assert.match(error.message, /limit/)
      }).pipe(Effect.provide(Trust.grant(0)))
    )

    it.effect("excess properties are ignored, not errors", () =>
      Effect.gen(function* () {
        const r = yield* Boundary.runJson(read, { path: "a.txt", extra: true })
        assert.isTrue(r.ok)
      }).pipe(Effect.provide(Trust.grant(0)))
    )

    it.effect("a defect stays a defect", () =>
      Effect.gen(function* () {
        const buggy = Tool.fromFunction({
          name: "buggy",
          input: Schema.Number,
          output: Schema.Number,
          f: (): number => {
            throw new Error("bug")
          }
        })
        const exit = yield* Effect.exit(Boundary.runJson(buggy, 1))
        assert.isTrue(Exit.hasDies(exit))
      })
    )

    it.effect("an output its schema cannot encode is a defect", () =>
      Effect.gen(function* () {
        const liar = Tool.fromFunction({
          name: "liar",
          input: Schema.Number,
          output: Schema.String,
          f: (n: number) => n as never
        })
        const exit = yield* Effect.exit(Boundary.runJson(liar, 1))
        assert.isTrue(Exit.hasDies(exit))
      })
    )
  })

  describe("describing", () => {
    it("jsonSchemas of input, output and failure", () => {
      const s = Boundary.jsonSchemas(read)
      assert.deepStrictEqual((s.input as { required: Array<string> }).required, ["path"])
      assert.match(JSON.stringify(s.failure), /NotFound/)
      assert.match(JSON.stringify(s.output), /"proof":\{"type":"string"/)
    })

    it("provider-safe names", () => {
      assert.strictEqual(Boundary.providerName("world.tools.file.read"), "world_tools_file_read")
      assert.throws(() => Boundary.providerName("x".repeat(65)))
    })

    it("OpenAI and Anthropic definitions", () => {
      const openai = Boundary.toOpenAiFunction(read)
      assert.strictEqual(openai.type, "function")
      assert.strictEqual(openai.function.name, "file_read")
      assert.strictEqual((openai.function.parameters as { type: string }).type, "object")
      const anthropic = Boundary.toAnthropicTool(read)
      assert.strictEqual(anthropic.name, "file_read")
      assert.strictEqual(anthropic.description, "Reads a file.")
      assert.deepStrictEqual((anthropic.input_schema as { required: Array<string> }).required, ["path"])
    })

    it("a non-object input still gets an object root for providers", () => {
      const n = Tool.fromFunction({ name: "n", input: Schema.Number, f: (x: number) => x })
      assert.strictEqual((Boundary.toAnthropicTool(n).input_schema as { type: string }).type, "object")
    })
  })
})
