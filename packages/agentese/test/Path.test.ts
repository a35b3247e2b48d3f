import { assert, describe, it } from "@effect/vitest"
import { Path } from "@ugent/agentese"
import { Option } from "effect"

describe("Path", () => {
  it("accepts context.holon.aspect paths", () => {
    for (const p of [
      "world.tools.file.read",
      "self.tools.task.create",
      "self.memory.read",
      "world.tools.search.grep"
    ]) {
      assert.isTrue(Path.isPath(p), p)
    }
  })

  it("refuses malformed paths", () => {
    for (const p of [
      "",
      "world",
      "World.tools",
      "world..tools",
      ".world.tools",
      "world.tools.",
      "world tools",
      "world_tools_file_read",
      "world.tools.file\u0000.read"
    ]) {
      assert.isFalse(Path.isPath(p), JSON.stringify(p))
    }
  })

  it("provider-safe names round-trip", () => {
    for (const p of ["world.tools.file.read", "self.tools.task.create", "world.tools.git.blame"]) {
      const name = Path.toProviderName(p)
      assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/)
      assert.deepStrictEqual(Path.fromProviderName(name), Option.some(p))
    }
    assert.isTrue(Option.isNone(Path.fromProviderName("not a name")))
  })

  it("patterns: * in a segment, a trailing * for the rest, * alone for all", () => {
    const cases: ReadonlyArray<readonly [string, string, boolean]> = [
      ["*", "world.tools.file.read", true],
      ["world.tools.*", "world.tools.file.read", true],
      ["world.tools.file.*", "world.tools.file.read", true],
      ["world.tools.file.*", "world.tools.file", false],
      ["world.tools.file.*", "world.tools.filesystem.read", false],
      ["world.*.file.read", "world.tools.file.read", true],
      ["world.tools.file.re*", "world.tools.file.read", true],
      ["world.tools.file.re*", "world.tools.file.write", false],
      ["world.tools.file.read", "world.tools.file.read", true],
      ["world.tools.file.read", "world.tools.file.readme", false],
      ["self.*", "world.tools.file.read", false]
    ]
    for (const [pattern, path, expected] of cases)
      assert.strictEqual(Path.matches(pattern, path), expected, `${pattern} ~ ${path}`)
  })
})
