/**
 * The report as Markdown: YAML front matter with the attribution (every
 * file read and every tool call, with its call id), then the four sections.
 * The front matter is the JSON form's own fields: each scalar and each list
 * item is written as JSON, which YAML reads as is.
 *
 * @internal
 */
import type * as S from "./schema.ts"

type Report = typeof S.Report.Type
type Section = typeof S.Section.Type

/** A value as one line of flow YAML (JSON with a space after each separator). */
const flow = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(flow).join(", ")}]`
  if (typeof value === "object" && value !== null) {
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${flow(v)}`)
      .join(", ")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const items = (key: string, values: ReadonlyArray<unknown>, indent: string): Array<string> =>
  values.length === 0 ? [`${indent}${key}: []`] : [`${indent}${key}:`, ...values.map((v) => `${indent}  - ${flow(v)}`)]

/** The YAML front matter, between `---` lines. */
export const frontMatter = (report: Report): string =>
  [
    "---",
    `protocol: ${report.protocol}`,
    `version: ${report.version}`,
    `project: ${flow(report.project)}`,
    `root: ${flow(report.root)}`,
    `generatedAt: ${flow(report.generatedAt)}`,
    `mode: ${report.mode}`,
    ...(report.model !== undefined ? [`model: ${flow(report.model)}`] : []),
    `durationMillis: ${report.durationMillis}`,
    ...(report.incomplete !== undefined ? [`incomplete: ${flow(report.incomplete)}`] : []),
    "attribution:",
    `  session: ${flow(report.attribution.session)}`,
    ...items("filesRead", report.attribution.filesRead, "  "),
    ...items("toolCalls", report.attribution.toolCalls, "  "),
    ...(report.attribution.perTool !== undefined ? items("perTool", report.attribution.perTool, "  ") : []),
    ...(report.attribution.confidence !== undefined ? [`  confidence: ${flow(report.attribution.confidence)}`] : []),
    "---"
  ].join("\n")

const section = (title: string, s: Section, numbered = false): string =>
  [
    `## ${title}`,
    "",
    s.summary,
    ...(s.points.length > 0 ? ["", ...s.points.map((p, i) => (numbered ? `${i + 1}. ${p}` : `- ${p}`))] : [])
  ].join("\n")

/** The report's body: a title, a line about how it was made, and the four sections. */
export const body = (report: Report): string => {
  const calls = report.attribution.toolCalls.length
  const how =
    report.mode === "deterministic" ? "deterministic pipeline (no model)" : `written by ${report.model ?? "a model"}`
  return [
    `# ${report.project}: project report`,
    "",
    `Project Resurrection · ${how} · ${report.generatedAt.replace("T", " ").replace(/\.\d+Z$/, "Z")} · ${calls} tool ${calls === 1 ? "call" : "calls"} in ${(report.durationMillis / 1000).toFixed(1)} s`,
    ...(report.about !== undefined ? ["", report.about] : []),
    ...(report.incomplete !== undefined ? ["", `**Incomplete:** ${report.incomplete}`] : []),
    ...(report.attribution.confidence !== undefined
      ? ["", `Confidence: ${report.attribution.confidence.level}. ${report.attribution.confidence.reason}`]
      : []),
    "",
    section("Last active area", report.lastActiveArea),
    "",
    section("Current state", report.currentState),
    "",
    section("Suggested next steps", report.nextSteps, true),
    "",
    section("Based on", report.basedOn),
    ""
  ].join("\n")
}

/** The whole Markdown file: front matter, then the body. */
export const markdown = (report: Report): string => `${frontMatter(report)}\n\n${body(report)}`
