import { assert, describe, it } from "@effect/vitest"
import { Parse } from "@ugent/agentese"

const right = (r: ReturnType<typeof Parse.execute>) => {
  if (r._tag === "Left") throw new Error(r.left.message)
  return r.right
}
const left = (r: ReturnType<typeof Parse.execute>) => {
  if (r._tag === "Right") throw new Error(`parsed: ${JSON.stringify(r.right)}`)
  return r.left
}

describe("Parse", () => {
  describe("EXECUTE lines", () => {
    it("types values: numbers stay numbers, booleans, null, JSON, quoted strings", () => {
      const inv = right(
        Parse.execute(
          `EXECUTE: world.tools.x.y --n=42 --f=-1.5e3 --t=true --no=false --z=null --s=hello --q="42" --sq='a "b"' --o={"a": [1, "} x"]} --arr=[1,2] --flag`
        )
      )
      assert.deepStrictEqual(inv.steps[0]!.args, {
        n: 42,
        f: -1500,
        t: true,
        no: false,
        z: null,
        s: "hello",
        q: "42",
        sq: 'a "b"',
        o: { a: [1, "} x"] },
        arr: [1, 2],
        flag: true
      })
    })

    it("keeps leading zeros and odd numerics as strings", () => {
      assert.deepStrictEqual(right(Parse.execute("EXECUTE: a.b --id=007 --v=1.2.3 --h=0x10")).steps[0]!.args, {
        id: "007",
        v: "1.2.3",
        h: "0x10"
      })
    })

    it("respects quotes with spaces and escapes", () => {
      assert.deepStrictEqual(
        right(Parse.execute(`EXECUTE: a.b --text="two words\\n and \\"quotes\\""`)).steps[0]!.args,
        {
          text: 'two words\n and "quotes"'
        }
      )
    })

    it("accepts provider-safe names", () => {
      assert.strictEqual(
        right(Parse.execute("EXECUTE: world_tools_file_read --path=a")).steps[0]!.path,
        "world.tools.file.read"
      )
    })

    it("errors tell a model what a correct call looks like", () => {
      const cases = [
        "EXECUTE: world.tools.file.read path=x",
        "EXECUTE: Read the file",
        'EXECUTE: world.tools.file.read --path="unclosed',
        'EXECUTE: world.tools.file.read --o={"a":',
        "EXECUTE: world.tools.file.read --o={nope}",
        "EXECUTE: world.tools.file.read --a=1 --a=2",
        "EXECUTE:"
      ]
      for (const c of cases) {
        const e = left(Parse.execute(c))
        assert.strictEqual(e._tag, "ParseError")
        assert.match(e.message, /A correct call looks like: /, c)
      }
    })
  })

  describe("pipelines", () => {
    it("splits on >> outside quotes and JSON", () => {
      const inv = right(
        Parse.pipeline(`world.tools.file.glob --pattern="a >> b" >> world.tools.text.count --o={"x":">>"}`)
      )
      assert.strictEqual(inv.source, "pipeline")
      assert.deepStrictEqual(
        inv.steps.map((s) => s.path),
        ["world.tools.file.glob", "world.tools.text.count"]
      )
      assert.deepStrictEqual(inv.steps[0]!.args, { pattern: "a >> b" })
      assert.deepStrictEqual(inv.steps[1]!.args, { o: { x: ">>" } })
    })

    it("an empty step is an error", () => {
      assert.match(left(Parse.pipeline("a.b >> >> c.d")).message, /empty/)
      assert.match(left(Parse.pipeline("a.b >>")).message, /empty/)
    })
  })

  describe("tool_call blocks", () => {
    it("reads tool/params and name/arguments", () => {
      assert.deepStrictEqual(
        right(Parse.toolCall('{"tool": "world.tools.file.read", "params": {"path": "a"}}')).steps,
        [{ path: "world.tools.file.read", args: { path: "a" } }]
      )
      assert.deepStrictEqual(
        right(Parse.toolCall('{"name": "world_tools_git_log", "arguments": {"limit": 3}}')).steps,
        [{ path: "world.tools.git.log", args: { limit: 3 } }]
      )
    })

    it("errors: not JSON, not an object, no tool, params not an object", () => {
      for (const c of ["{", "[1]", '{"params": {}}', '{"tool": "a.b", "params": [1]}', '{"tool": "Not A Path"}']) {
        assert.match(left(Parse.toolCall(c)).message, /A correct call looks like: <tool_call>/, c)
      }
    })
  })

  describe("tool_use blocks", () => {
    it("reads <name> and <input>, with whitespace and newlines between elements", () => {
      assert.deepStrictEqual(
        right(
          Parse.toolUse('\n  <name> world_tools_file_read </name>\n  <input>\n{"path": "a", "limit": 2}\n</input>\n')
        ).steps,
        [{ path: "world.tools.file.read", args: { path: "a", limit: 2 } }]
      )
      assert.strictEqual(right(Parse.toolUse("<name>world.tools.git.status</name>")).source, "tool_use")
      assert.deepStrictEqual(right(Parse.toolUse("<name>world.tools.git.status</name><input> </input>")).steps, [
        { path: "world.tools.git.status", args: {} }
      ])
    })

    it("a pipeline in <name>: the arguments go to the first step", () => {
      const inv = right(
        Parse.toolUse('<name>world_tools_file_read >> world.tools.file.edit</name><input>{"path": "a"}</input>')
      )
      assert.strictEqual(inv.source, "pipeline")
      assert.deepStrictEqual(inv.steps, [
        { path: "world.tools.file.read", args: { path: "a" } },
        { path: "world.tools.file.edit", args: {} }
      ])
    })

    it("the command-execution document's form: <tool_name> and <parameters>, as JSON or one element per argument", () => {
      const json = right(
        Parse.toolUse(
          '\n<tool_name>world_tools_file_read</tool_name>\n<parameters>\n{"path": "a.ts", "startLine": 2}\n</parameters>\n'
        )
      )
      assert.strictEqual(json.source, "tool_use")
      assert.deepStrictEqual(json.steps, [{ path: "world.tools.file.read", args: { path: "a.ts", startLine: 2 } }])
      const elements = right(
        Parse.toolUse(
          [
            "<tool_name>world.tools.file.write</tool_name>",
            "<parameters>",
            "  <path>notes/a b.md</path>",
            "  <content>",
            "line one",
            "  line two",
            "</content>",
            "  <dryRun>true</dryRun>",
            '  <edits>[{"oldText": "x", "newText": "y"}]</edits>',
            "  <limit> 50 </limit>",
            "</parameters>"
          ].join("\n")
        )
      )
      assert.deepStrictEqual(elements.steps[0]!.args, {
        path: "notes/a b.md",
        content: "line one\n  line two",
        dryRun: true,
        edits: [{ oldText: "x", newText: "y" }],
        limit: 50
      })
      // Names of one form, arguments of the other, and no arguments at all.
      assert.deepStrictEqual(
        right(Parse.toolUse('<name>world.tools.git.log</name><parameters>{"limit": 3}</parameters>')).steps[0]!.args,
        { limit: 3 }
      )
      assert.deepStrictEqual(right(Parse.toolUse("<tool_name>world.tools.git.status</tool_name>")).steps[0]!.args, {})
    })

    it("keeps the body raw: markup inside a JSON string is an argument, entities are not decoded", () => {
      const inv = right(
        Parse.toolUse('<name>world.tools.file.write</name><input>{"content": "<input>&lt;b&gt;</input>"}</input>')
      )
      assert.deepStrictEqual(inv.steps[0]!.args, { content: "<input>&lt;b&gt;</input>" })
    })

    it("errors show a correct block: no name, name not first, another element, not JSON, not an object, not a path", () => {
      const cases = [
        "",
        '<input>{"path": "a"}</input><name>world.tools.file.read</name>',
        "text <name>world.tools.file.read</name>",
        "<name>world.tools.file.read</name><parameters>{}</input>",
        "<name>world.tools.file.read</name><arguments>{}</arguments>",
        "<tool_name>world.tools.file.read</name>",
        "<tool_name>world.tools.file.read</tool_name><parameters><path>a</path> loose text</parameters>",
        "<tool_name>world.tools.file.read</tool_name><parameters><path>a</path><path>b</path></parameters>",
        "<name>world.tools.file.read</name><input>{}</input> trailing",
        "<name>world.tools.file.read</name><input>{path: a}</input>",
        "<name>world.tools.file.read</name><input>[1]</input>",
        "<name>Read The File</name>"
      ]
      for (const c of cases) {
        const e = left(Parse.toolUse(c))
        assert.strictEqual(e._tag, "ParseError")
        assert.include(e.message, "A correct call looks like: <tool_use><name>world_tools_file_read</name>", c)
      }
    })
  })

  describe("responses", () => {
    it("reads <tool_use> blocks beside EXECUTE lines and <tool_call> blocks, in order", () => {
      const text = [
        '<tool_use><name>world_tools_search_grep</name><input>{"pattern": "TODO"}</input></tool_use>',
        "EXECUTE: world.tools.file.read --path=README.md",
        '<tool_call>{"tool": "world.tools.git.log"}</tool_call>',
        "<tool_use>",
        "  <name>world.tools.file.write</name>",
        '  <input>{"path": "x.md", "content": "a\\nEXECUTE: world.tools.system.bash --command=ls"}</input>',
        "</tool_use>",
        "<tool_use><name>world.tools.file.list</name><input>nope</input></tool_use>",
        '<tool_use><name>world.tools.file.read</name><input>{"path": "a"}'
      ].join("\n")
      const r = Parse.response(text)
      assert.deepStrictEqual(
        r.invocations.map((i) => [i.source, i.steps[0]!.path]),
        [
          ["tool_use", "world.tools.search.grep"],
          ["execute", "world.tools.file.read"],
          ["tool_call", "world.tools.git.log"],
          ["tool_use", "world.tools.file.write"]
        ]
      )
      // The broken block and the unclosed one; the EXECUTE text inside a block's input is not a call.
      assert.deepStrictEqual(
        r.errors.map((e) => e.problem),
        [
          "the <input> is not JSON (Unexpected token 'o', \"nope\" is not valid JSON)",
          "the <tool_use> block is not closed"
        ]
      )
    })

    it("finds every call in order, and every broken one", () => {
      const text = [
        "I will look first.",
        '<tool_call>{"tool": "world.tools.file.glob", "params": {"pattern": "*.md"}}</tool_call>',
        "EXECUTE: world.tools.file.read --path=README.md",
        "EXECUTE: nonsense here",
        "<tool_call>{broken}</tool_call>",
        'and an unclosed <tool_call>{"tool": "a.b"'
      ].join("\n")
      const r = Parse.response(text)
      assert.deepStrictEqual(
        r.invocations.map((i) => i.steps[0]!.path),
        ["world.tools.file.glob", "world.tools.file.read"]
      )
      assert.strictEqual(r.errors.length, 3)
    })

    it("ignores prose that mentions EXECUTE in the middle of a line", () => {
      assert.strictEqual(Parse.response("You could EXECUTE: something").invocations.length, 0)
    })
  })
})
