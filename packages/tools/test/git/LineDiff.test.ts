import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { diffLines, hunksOf, splitLines } from "../../src/git/internal/xdiff.ts"
import { gitGate } from "./fixtures.ts"

const gate = gitGate()

/** A deterministic generator (LCG), so a failure can be replayed from its seed. */
const generator = (seed: number) => {
  let s = seed
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648
  }
}

const render = (a: string, b: string, context: number, ignoreWhitespace: boolean): string => {
  const x = splitLines(a)
  const y = splitLines(b)
  let out = ""
  for (const h of hunksOf(x, y, diffLines(x, y, { ignoreWhitespace }), context)) {
    const range = (start: number, count: number) => (count === 1 ? `${start}` : `${start},${count}`)
    out += `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@\n`
    for (const l of h.lines) {
      out += `${l.type === "context" ? " " : l.type === "add" ? "+" : "-"}${l.content}\n`
      if (l.noNewlineAtEnd) out += "\\ No newline at end of file\n"
    }
  }
  return out
}

const dir = fs.mkdtempSync(path.join(tmpdir(), "linediff-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const gitHunks = (a: string, b: string, context: number, ignoreWhitespace: boolean): string => {
  fs.writeFileSync(path.join(dir, "a"), a)
  fs.writeFileSync(path.join(dir, "b"), b)
  let out = ""
  try {
    execFileSync(
      "git",
      [
        "diff",
        "--no-index",
        "--no-color",
        "--diff-algorithm=myers",
        "--indent-heuristic",
        `-U${context}`,
        ...(ignoreWhitespace ? ["-w"] : []),
        "a",
        "b"
      ],
      {
        cwd: dir,
        encoding: "utf8",
        env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }
      }
    )
  } catch (e) {
    out = (e as { stdout: string }).stdout
  }
  return out
    .split("\n")
    .filter((l) => !/^(diff --git|index |--- |\+\+\+ |new file|deleted file|old mode|new mode)/.test(l))
    .join("\n")
    .replace(/^(@@ [^@]* @@).*$/gm, "$1")
}

const corpus = (alphabet: ReadonlyArray<string>, seed: number, cases: number, size: number) => {
  const rand = generator(seed)
  const pick = () => alphabet[Math.floor(rand() * alphabet.length)]!
  const gen = (n: number) => {
    let s = ""
    for (let i = 0; i < n; i++) s += pick()
    return rand() < 0.2 ? s.slice(0, -1) : s
  }
  const mutate = (s: string) => {
    const out: Array<string> = []
    for (const l of splitLines(s)) {
      const r = rand()
      if (r < 0.12) continue
      if (r < 0.24) out.push(pick())
      out.push(l)
      if (r > 0.94) out.push(pick())
    }
    return out.join("")
  }
  return Array.from({ length: cases }, () => {
    const a = gen(Math.floor(rand() * size))
    const b = rand() < 0.75 ? mutate(a) : gen(Math.floor(rand() * size))
    return { a, b, context: [0, 1, 3, 10][Math.floor(rand() * 4)]!, ws: rand() < 0.2 }
  })
}

describe(`line diff${gate.note}`, () => {
  describe("splitLines", () => {
    it("keeps each line feed with its line and the last line without one", () => {
      expect(splitLines("a\nb\nc")).toEqual(["a\n", "b\n", "c"])
      expect(splitLines("a\n\n")).toEqual(["a\n", "\n"])
      expect(splitLines("")).toEqual([])
    })
  })

  describe("hunksOf", () => {
    it("numbers an insertion into an empty file as git does", () => {
      const b = splitLines("x\ny\n")
      const [h] = hunksOf([], b, diffLines([], b), 3)
      expect(h).toMatchObject({ oldStart: 0, oldLines: 0, newStart: 1, newLines: 2 })
      expect(h?.lines.map((l) => l.newLine)).toEqual([1, 2])
    })

    it("marks a last line without a line feed", () => {
      const a = splitLines("same\nold")
      const b = splitLines("same\nnew")
      const lines = hunksOf(a, b, diffLines(a, b), 3)[0]?.lines ?? []
      expect(lines.filter((l) => l.noNewlineAtEnd === true).map((l) => l.content)).toEqual(["old", "new"])
    })
  })

  describe.skipIf(gate.skip)("agrees with git diff --no-index", () => {
    it("on small files with many ambiguous lines (sliders, blank lines, indentation)", () => {
      const alphabet = ["a\n", "b\n", "c\n", "\n", "  x\n", "    y\n", "}\n", "{\n", "\tz\n", "d\n", " e \n"]
      for (const [i, c] of corpus(alphabet, 7, 120, 40).entries()) {
        expect(render(c.a, c.b, c.context, c.ws), `case ${i}`).toBe(gitHunks(c.a, c.b, c.context, c.ws))
      }
    })

    it("on large files where the cost limits and the snake heuristic apply", () => {
      const alphabet = Array.from({ length: 300 }, (_, i) => `${i % 7 === 0 ? "  " : ""}line ${i}\n`)
      for (const [i, c] of corpus(alphabet, 11, 12, 4000).entries()) {
        expect(render(c.a, c.b, c.context, c.ws), `case ${i}`).toBe(gitHunks(c.a, c.b, c.context, c.ws))
      }
    })

    it("on large files made of few distinct lines (many-match lines set aside)", () => {
      const alphabet = ["a\n", "b\n", "\n", "}\n", "  c\n"]
      for (const [i, c] of corpus(alphabet, 5, 10, 3000).entries()) {
        expect(render(c.a, c.b, c.context, c.ws), `case ${i}`).toBe(gitHunks(c.a, c.b, c.context, c.ws))
      }
    })
  })
})
