import { assert, describe, it } from "@effect/vitest"
import { Boundary, ReadProof, Tool, Trust } from "@ugent/core"
import { Effect, Exit, Option, Schema } from "effect"

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

    it.effect("a key the input does not declare is refused, not ignored", () =>
      Effect.gen(function* () {
        const r = yield* Boundary.runJson(read, { path: "a.txt", extra: true })
        assert.deepStrictEqual(r.ok ? undefined : [r.error._tag, r.error.unknown], ["UnknownArguments", ["extra"]])
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

  describe("unknown arguments", () => {
    const reader = Tool.make({
      name: "file.read",
      description: "Reads a file.",
      input: Schema.Struct({
        path: Schema.String,
        offset: Schema.optionalKey(Schema.Int),
        limit: Schema.optionalKey(Schema.Int),
        edits: Schema.optionalKey(Schema.Array(Schema.Struct({ oldText: Schema.String, newText: Schema.String })))
      }),
      output: Schema.String,
      failure: Schema.Never,
      run: ({ path }) => Effect.succeed(path)
    })

    it.effect("threat: a model's startLine/endLine are ignored and the whole file comes back", () =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(Boundary.decodeInput(reader, { path: "a.ts", startLine: 1, endLine: 2 }))
        assert.strictEqual(e._tag, "UnknownArguments")
        if (e._tag !== "UnknownArguments") return
        assert.deepStrictEqual(e.unknown, ["startLine", "endLine"])
        assert.deepStrictEqual(e.known, ["path", "offset", "limit", "edits"])
        assert.deepStrictEqual(e.suggestions, { startLine: "offset", endLine: "limit" })
        assert.include(e.message, "file.read takes path, offset, limit, edits")
        assert.include(e.message, "Did you mean offset (for startLine), limit (for endLine)?")
        // At the JSON boundary too: a typed failure, with its fields.
        const r = yield* Boundary.runJson(reader, { path: "a.ts", startLine: 1 })
        assert.isFalse(r.ok)
        if (!r.ok)
          assert.deepStrictEqual(
            [r.error._tag, r.error.known],
            ["UnknownArguments", ["path", "offset", "limit", "edits"]]
          )
      }).pipe(Effect.provide(Trust.grant(0)))
    )

    it.effect("a tool that takes startLine and endLine is offered them for a model's from/to and start_line", () =>
      Effect.gen(function* () {
        const ranged = Tool.make({
          name: "file.read",
          description: "Reads a file.",
          input: Schema.Struct({
            path: Schema.String,
            offset: Schema.optionalKey(Schema.Int),
            limit: Schema.optionalKey(Schema.Int),
            startLine: Schema.optionalKey(Schema.Int),
            endLine: Schema.optionalKey(Schema.Int)
          }),
          output: Schema.String,
          failure: Schema.Never,
          run: ({ path }) => Effect.succeed(path)
        })
        const words = yield* Effect.flip(Boundary.decodeInput(ranged, { path: "a", from: 1, to: 2 }))
        assert.include(words.message, "Did you mean startLine (for from), endLine (for to)?")
        const snake = yield* Effect.flip(Boundary.decodeInput(ranged, { path: "a", start_line: 1, end_line: 2 }))
        assert.include(snake.message, "Did you mean startLine (for start_line), endLine (for end_line)?")
        const count = yield* Effect.flip(Boundary.decodeInput(ranged, { path: "a", maxLines: 5 }))
        assert.include(count.message, "Did you mean limit (for maxLines)?")
      })
    )

    it.effect("respellings and typos are suggested; a key the input already has is not", () =>
      Effect.gen(function* () {
        const typo = yield* Effect.flip(Boundary.decodeInput(reader, { path: "a", limt: 3, file_path: "b" }))
        assert.deepStrictEqual(typo._tag === "UnknownArguments" && typo.suggestions, { limt: "limit" })
        const respelled = yield* Effect.flip(Boundary.decodeInput(reader, { Path: "a" }))
        assert.deepStrictEqual(respelled._tag === "UnknownArguments" && respelled.suggestions, { Path: "path" })
        const unlike = yield* Effect.flip(Boundary.decodeInput(reader, { path: "a", colour: "red" }))
        assert.deepStrictEqual(unlike._tag === "UnknownArguments" && unlike.suggestions, {})
        assert.notInclude(unlike.message, "Did you mean")
      })
    )

    it.effect("a nested object's unknown key is refused with where it is", () =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(
          Boundary.decodeInput(reader, {
            path: "a",
            edits: [
              { oldText: "x", newText: "y" },
              { old: "x", newText: "y" }
            ]
          })
        )
        assert.strictEqual(e._tag, "UnknownArguments")
        if (e._tag !== "UnknownArguments") return
        assert.deepStrictEqual(
          [e.at, e.unknown, e.known, e.suggestions],
          ["edits[1]", ["old"], ["oldText", "newText"], { old: "oldText" }]
        )
        assert.include(e.message, "file.read at edits[1] takes oldText, newText")
      })
    )

    it.effect("onExcessProperty ignore drops unknown keys (a pipeline step's inherited input)", () =>
      Effect.gen(function* () {
        const decoded = yield* Boundary.decodeInput(reader, { path: "a", content: "x" }, { onExcessProperty: "ignore" })
        assert.deepStrictEqual(decoded, { path: "a" })
      })
    )

    it("the input's JSON Schema is closed (additionalProperties: false), as are the provider definitions", () => {
      const input = Boundary.jsonSchemas(reader).input as {
        readonly additionalProperties?: unknown
        readonly properties: { readonly edits: { readonly items: { readonly additionalProperties?: unknown } } }
      }
      assert.strictEqual(input.additionalProperties, false)
      assert.strictEqual(input.properties.edits.items.additionalProperties, false)
      assert.strictEqual(Boundary.toOpenAiFunction(reader).function.parameters.additionalProperties, false)
      assert.strictEqual(Boundary.toAnthropicTool(reader).input_schema.additionalProperties, false)
      assert.deepStrictEqual(Boundary.inputKeys(reader), ["path", "offset", "limit", "edits"])
      assert.isUndefined(Boundary.inputKeys(Tool.identity(Schema.String)))
    })
  })

  describe("describing", () => {
    it("jsonSchemas of input, output and failure", () => {
      const s = Boundary.jsonSchemas(read)
      assert.deepStrictEqual((s.input as { required: Array<string> }).required, ["path"])
      assert.match(JSON.stringify(s.failure), /NotFound/)
      assert.match(JSON.stringify(s.output), /"proof":\{"type":"string"/)
    })

    it("integers carry no safe-integer bounds, and bounds a schema states stay", () => {
      const bounded = Tool.make({
        name: "bounded",
        description: "Takes integers.",
        input: Schema.Struct({
          any: Schema.Int,
          positive: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
          list: Schema.Array(Schema.Struct({ n: Schema.Int }))
        }),
        output: Schema.Number,
        failure: Schema.Never,
        run: () => Effect.succeed(1)
      })
      const input = Boundary.jsonSchemas(bounded).input as {
        readonly properties: Record<
          string,
          { readonly type?: string; readonly minimum?: number; readonly maximum?: number }
        >
      }
      assert.deepStrictEqual(input.properties.any, { type: "integer" })
      assert.notInclude(JSON.stringify(input), String(Number.MAX_SAFE_INTEGER))
      assert.include(JSON.stringify(input.properties.positive), '"minimum":1')
      assert.include(JSON.stringify(input.properties.list), '"type":"integer"')
      // The strict (OpenAI, Anthropic) forms too.
      for (const dialect of ["openai", "anthropic"] as const) {
        const strict = JSON.stringify(Option.getOrThrow(Boundary.strictParameters(bounded, dialect)))
        assert.include(strict, '"type":"integer"', dialect)
        assert.notInclude(strict, String(Number.MAX_SAFE_INTEGER), dialect)
      }
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
  describe("strict mode", () => {
    const search = Tool.fromFunction({
      name: "search.grep",
      description: "Searches files.",
      input: Schema.Struct({
        pattern: Schema.String,
        limit: Schema.optionalKey(Schema.Int),
        glob: Schema.optional(Schema.String),
        options: Schema.optionalKey(
          Schema.Struct({ ignoreCase: Schema.Boolean, context: Schema.optionalKey(Schema.Int) })
        ),
        paths: Schema.optionalKey(Schema.Array(Schema.String))
      }),
      f: ({ pattern }: { readonly pattern: string }) => pattern
    })

    // OpenAI's strict rules: every object is closed and lists every property as required.
    const assertStrict = (schema: unknown, at = "$"): void => {
      if (typeof schema !== "object" || schema === null) return
      const s = schema as Record<string, unknown>
      if (s.type === "object" && s.properties !== undefined) {
        assert.strictEqual(s.additionalProperties, false, `${at} is closed`)
        assert.sameMembers(s.required as Array<string>, Object.keys(s.properties as object), `${at} requires all`)
      }
      for (const [key, value] of Object.entries(s)) {
        if (Array.isArray(value)) {
          for (const [i, v] of value.entries()) assertStrict(v, `${at}.${key}[${i}]`)
        } else assertStrict(value, `${at}.${key}`)
      }
    }

    it("the plain definitions say strict: false and keep the plain schema", () => {
      const plain = Boundary.toOpenAiFunction(search)
      assert.isFalse(plain.function.strict)
      assert.deepStrictEqual(plain.function.parameters.required, ["pattern"])
      assert.strictEqual(Boundary.toOpenAiFunction(search, "grep").function.name, "grep")
      assert.isUndefined(Boundary.toAnthropicTool(search).strict)
    })

    it("strict definitions close every object and require every property, optional ones nullable", () => {
      const chat = Boundary.toOpenAiFunction(search, { strict: true })
      assert.isTrue(chat.function.strict)
      assertStrict(chat.function.parameters)
      const limit = (chat.function.parameters.properties as Record<string, { anyOf: Array<{ type: string }> }>).limit!
      assert.deepStrictEqual(
        limit.anyOf.map((s) => s.type),
        ["integer", "null"]
      )
      const responses = Boundary.toOpenAiResponsesTool(search, { strict: true, name: "grep" })
      assert.deepStrictEqual(
        { type: responses.type, name: responses.name, strict: responses.strict },
        { type: "function", name: "grep", strict: true }
      )
      assertStrict(responses.parameters)
      const anthropic = Boundary.toAnthropicTool(search, { strict: true })
      assert.isTrue(anthropic.strict)
      assertStrict(anthropic.input_schema)
    })

    it("an input with no strict form keeps the plain schema and says strict: false", () => {
      const n = Tool.fromFunction({ name: "n", input: Schema.Number, f: (x: number) => x })
      assert.isTrue(Option.isNone(Boundary.strictParameters(n)))
      const definition = Boundary.toOpenAiFunction(n, { strict: true })
      assert.isFalse(definition.function.strict)
      assert.strictEqual(definition.function.parameters.type, "object")
    })

    it.effect("a model's strict arguments become the tool's input: nulls for absent optional fields are dropped", () =>
      Effect.gen(function* () {
        const input = yield* Boundary.fromStrictArguments(search, {
          pattern: "TODO",
          limit: null,
          glob: null,
          options: { ignoreCase: true, context: null },
          paths: null
        })
        assert.deepStrictEqual(input, { pattern: "TODO", options: { ignoreCase: true } })
        const run = yield* Boundary.runJson(search, input)
        assert.isTrue(run.ok)
      })
    )

    it.effect("strict arguments that do not fit fail with InvalidInput naming the tool", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(Boundary.fromStrictArguments(search, { pattern: 1 }))
        assert.strictEqual(error._tag, "InvalidInput")
        assert.strictEqual(error.tool, "search.grep")
      })
    )

    // What a strict-mode model sends: every property present, `null` for an absent one.
    const asStrictModel = (schema: unknown, value: unknown): unknown => {
      const s = schema as { properties?: Record<string, unknown>; anyOf?: Array<unknown>; items?: unknown }
      if (value === null || value === undefined) return null
      if (s.anyOf !== undefined) {
        const branch = s.anyOf.find((b) => (b as { type?: string }).type !== "null")
        return asStrictModel(branch, value)
      }
      if (s.properties !== undefined && typeof value === "object" && !Array.isArray(value)) {
        const record = value as Record<string, unknown>
        return Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, asStrictModel(v, record[k])]))
      }
      if (Array.isArray(value)) return value.map((v) => asStrictModel(s.items, v))
      return value
    }

    // The law behind fromStrictArguments: for every input, what a strict-mode model sends for it comes back as
    // the input's plain encoding.
    it.effect.prop(
      "fromStrictArguments inverts the strict encoding of every input",
      [search.input as Schema.Codec<unknown, unknown>],
      ([a]) =>
        Effect.gen(function* () {
          // Compared as JSON: at a boundary an undefined field and an absent one are the same.
          const plain = JSON.parse(JSON.stringify(yield* Schema.encodeUnknownEffect(search.input)(a)))
          const strict = asStrictModel(Option.getOrThrow(Boundary.strictParameters(search)), plain)
          assert.deepStrictEqual(yield* Boundary.fromStrictArguments(search, strict), plain)
        }),
      { arbitrary: { runs: 200 } }
    )
  })

  describe("jsonText", () => {
    it.prop(
      "is JSON.stringify's text, the same for the same object every time",
      { value: Schema.Json },
      ({ value }) => {
        const text = Boundary.jsonText(value)
        assert.strictEqual(text, JSON.stringify(value) ?? "null")
        assert.strictEqual(Boundary.jsonText(value), text)
      }
    )

    it("prints undefined as null", () => {
      assert.strictEqual(Boundary.jsonText(undefined), "null")
    })
  })
})
