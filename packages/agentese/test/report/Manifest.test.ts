/**
 * The report's reading of manifests and paths: the project types a folder's
 * top-level names show, the manifests it parses (package.json, Cargo.toml,
 * pyproject.toml in both PEP 621 and Poetry form, go.mod,
 * requirements.txt), tolerance of what it does not understand, and the
 * areas paths fall in.
 */
import { assert, describe, it } from "@effect/vitest"
import { areaOf, inputSummary } from "../../src/internal/report/gather.ts"
import * as Manifest from "../../src/internal/report/manifest.ts"

describe("report manifests", () => {
  it("markers: the types of the top-level manifests, in a fixed order, primary first", () => {
    assert.deepStrictEqual(Manifest.markers(["README.md", "go.mod", "package.json", "App.csproj", "Makefile"]), [
      { type: "node", file: "package.json" },
      { type: "go", file: "go.mod" },
      { type: "make", file: "Makefile" },
      { type: ".net", file: "App.csproj" }
    ])
    assert.deepStrictEqual(Manifest.markers(["notes.txt"]), [])
    assert.strictEqual(Manifest.readable(Manifest.markers(["Makefile", "Cargo.toml"]))?.file, "Cargo.toml")
    assert.isUndefined(Manifest.readable(Manifest.markers(["Makefile"])))
  })

  it("package.json: name, version, dependencies, scripts and workspaces (array or object form)", () => {
    const facts = Manifest.parse(
      "package.json",
      JSON.stringify({
        name: "a",
        version: "1.0.0",
        dependencies: { zod: "1", effect: "4" },
        devDependencies: { vitest: "5" },
        scripts: { test: "vitest", build: "tsc" },
        workspaces: { packages: ["packages/*"] }
      })
    )
    assert.deepStrictEqual(facts, {
      name: "a",
      version: "1.0.0",
      description: null,
      dependencies: ["effect", "zod"],
      devDependencies: ["vitest"],
      scripts: [
        { name: "build", command: "tsc" },
        { name: "test", command: "vitest" }
      ],
      workspaces: ["packages/*"]
    })
    assert.isUndefined(Manifest.parse("package.json", "{ not json"))
    assert.isUndefined(Manifest.parse("package.json", "[1, 2]"))
  })

  it("Cargo.toml: the package table, dependencies (inline tables too), dev-dependencies, workspace members", () => {
    const facts = Manifest.parse(
      "Cargo.toml",
      [
        "[package]",
        'name = "crab" # the name',
        'version = "0.2.0"',
        'description = "A crab"',
        "",
        "[workspace]",
        "members = [",
        '  "crates/a",',
        '  "crates/b",',
        "]",
        "",
        "[dependencies]",
        'serde = { version = "1", features = ["derive"] }',
        'anyhow = "1"',
        "",
        "[dev-dependencies]",
        'proptest = "1"'
      ].join("\n")
    )
    assert.deepInclude(facts!, {
      name: "crab",
      version: "0.2.0",
      description: "A crab",
      dependencies: ["anyhow", "serde"],
      devDependencies: ["proptest"],
      workspaces: ["crates/a", "crates/b"]
    })
  })

  it("pyproject.toml: PEP 621 requirements by name, optional ones as dev; Poetry's tables", () => {
    const pep = Manifest.parse(
      "pyproject.toml",
      [
        "[project]",
        'name = "snake"',
        'version = "0.1"',
        'dependencies = ["requests>=2.0", "click ; python_version > \'3.8\'"]',
        "",
        "[project.optional-dependencies]",
        'test = ["pytest"]',
        "",
        "[project.scripts]",
        'snake = "snake.cli:main"'
      ].join("\n")
    )
    assert.deepInclude(pep!, {
      name: "snake",
      dependencies: ["requests", "click"],
      devDependencies: ["pytest"],
      scripts: [{ name: "snake", command: "snake.cli:main" }]
    })
    const poetry = Manifest.parse(
      "pyproject.toml",
      [
        "[tool.poetry]",
        'name = "poem"',
        "",
        "[tool.poetry.dependencies]",
        'python = "^3.11"',
        'httpx = "*"',
        "",
        "[tool.poetry.group.dev.dependencies]",
        'ruff = "*"'
      ].join("\n")
    )
    assert.deepInclude(poetry!, { name: "poem", dependencies: ["httpx"], devDependencies: ["ruff"] })
    assert.isUndefined(Manifest.parse("pyproject.toml", "[tool.black]\nline-length = 100\n"))
  })

  it("go.mod: the module, direct and indirect requirements", () => {
    const facts = Manifest.parse(
      "go.mod",
      [
        "module example.com/m",
        "",
        "go 1.22",
        "",
        "require (",
        "\tgithub.com/a/b v1.0.0",
        "\tgolang.org/x/sys v0.1.0 // indirect",
        ")",
        "require github.com/c/d v2.0.0"
      ].join("\n")
    )
    assert.deepInclude(facts!, {
      name: "example.com/m",
      version: "go 1.22",
      dependencies: ["github.com/a/b", "github.com/c/d"],
      devDependencies: ["golang.org/x/sys"]
    })
  })

  it("requirements.txt: names, without versions, options or comments", () => {
    assert.deepStrictEqual(
      Manifest.parse("requirements.txt", "# pinned\nrequests==2.31\n-r other.txt\nnumpy>=1.26 # maths\n")?.dependencies,
      ["numpy", "requests"]
    )
  })

  it("test and install commands follow the project type and its scripts", () => {
    assert.strictEqual(Manifest.testCommand("rust", undefined), "cargo test")
    assert.isUndefined(Manifest.testCommand("node", Manifest.parse("package.json", "{}")))
    assert.strictEqual(Manifest.installCommand("node"), "npm install")
    assert.isUndefined(Manifest.installCommand("make"))
  })
})

describe("report paths and inputs", () => {
  it("areaOf: the top directory, two levels under a container", () => {
    assert.strictEqual(areaOf("README.md"), "(root)")
    assert.strictEqual(areaOf("docs/a/b.md"), "docs")
    assert.strictEqual(areaOf("packages/tools/src/git/Log.ts"), "packages/tools")
    assert.strictEqual(areaOf("src/report/x.ts"), "src/report")
    assert.strictEqual(areaOf("src/x.ts"), "src")
  })

  it("inputSummary: canonical JSON with sorted keys, cut at 200 characters like the audit store's", () => {
    assert.strictEqual(
      inputSummary({ path: "a", limit: 1, nested: { z: 1, a: [2, { y: 1, b: 2 }] } }),
      '{"limit":1,"nested":{"a":[2,{"b":2,"y":1}],"z":1},"path":"a"}'
    )
    const long = inputSummary({ pattern: "x".repeat(300) })
    assert.strictEqual(long.length, 200)
    assert.isTrue(long.endsWith("…"))
  })
})
