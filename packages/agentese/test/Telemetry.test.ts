/**
 * Telemetry against a real OTLP/HTTP receiver: a node:http server on
 * loopback, started by each test, that keeps every request it is sent. The
 * road's calls run under `Telemetry.layer()` with the environment given as a
 * `ConfigProvider`; the receiver decodes what arrives.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Invoke, Server, Telemetry } from "@ugent/agentese"
import { ConfigProvider, Effect, Exit, Option } from "effect"

interface Received {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/** An OTLP/HTTP receiver on loopback: every request is kept and answered 200. */
const receiver = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ readonly endpoint: string; readonly received: Array<Received>; readonly close: () => void }>(
        (resolve) => {
          const received: Array<Received> = []
          const server = createServer((request, response) => {
            const chunks: Array<Buffer> = []
            request.on("data", (chunk: Buffer) => chunks.push(chunk))
            request.on("end", () => {
              received.push({
                method: request.method,
                url: request.url,
                headers: request.headers,
                body: Buffer.concat(chunks)
              })
              response.writeHead(200, { "content-type": "application/json" }).end("{}")
            })
          })
          server.listen(0, "127.0.0.1", () =>
            resolve({
              endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
              received,
              close: () => server.close()
            })
          )
        }
      )
  ),
  (r) => Effect.sync(r.close)
)

/** Reads a file on the road, under the telemetry layer, with `env` as the environment. */
const readOnTheRoad = (env: Record<string, string>) =>
  Effect.gen(function* () {
    const root = mkdtempSync(join(tmpdir(), "ugent-telemetry-"))
    writeFileSync(join(root, "a.txt"), "alpha\n")
    const outcome = yield* Invoke.invoke({ path: "world.tools.file.read", input: { path: "a.txt" } }).pipe(
      Effect.provide(Server.layer({ root, stores: "memory" })),
      Effect.provide(Telemetry.layer({ serviceVersion: "9.9.9" })),
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
      Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
    )
    assert.isTrue(outcome.ok)
  })

type AnyValue = { readonly stringValue?: string; readonly intValue?: string | number; readonly boolValue?: boolean }
type KeyValue = { readonly key: string; readonly value: AnyValue }
interface OtlpJson {
  readonly resourceSpans: ReadonlyArray<{
    readonly resource: { readonly attributes: ReadonlyArray<KeyValue> }
    readonly scopeSpans: ReadonlyArray<{
      readonly spans: ReadonlyArray<{ readonly name: string; readonly attributes: ReadonlyArray<KeyValue> }>
    }>
  }>
}

const attributes = (kvs: ReadonlyArray<KeyValue>): Record<string, unknown> =>
  Object.fromEntries(kvs.map((kv) => [kv.key, kv.value.stringValue ?? kv.value.intValue ?? kv.value.boolValue]))

describe("Telemetry", () => {
  it.effect(
    "with OTEL_EXPORTER_OTLP_ENDPOINT, the road's spans reach the collector as OTLP/HTTP JSON, tool spans with GenAI attributes",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const otlp = yield* receiver
          yield* readOnTheRoad({
            OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
            OTEL_SERVICE_NAME: "ugent-test",
            OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,team=agents%20and%20tools",
            OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=secret%3D1"
          })
          // The layer's scope has closed: the last batch is sent before that completes.
          assert.isAbove(otlp.received.length, 0)
          const request = otlp.received[0]!
          assert.strictEqual(request.method, "POST")
          assert.strictEqual(request.url, "/v1/traces")
          assert.match(String(request.headers["content-type"]), /^application\/json/)
          assert.strictEqual(request.headers["x-api-key"], "secret=1")

          const payloads = otlp.received.map((r) => JSON.parse(r.body.toString("utf8")) as OtlpJson)
          const resource = attributes(payloads[0]!.resourceSpans[0]!.resource.attributes)
          assert.deepInclude(resource, {
            "service.name": "ugent-test",
            "service.version": "9.9.9",
            "deployment.environment": "test",
            team: "agents and tools"
          })
          const spans = payloads.flatMap((p) =>
            p.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))
          )
          const tool = spans.find((s) => s.name === "world.tools.file.read")
          assert.isDefined(tool, `spans: ${spans.map((s) => s.name).join(", ")}`)
          const a = attributes(tool!.attributes)
          assert.strictEqual(a["gen_ai.operation.name"], "execute_tool")
          assert.strictEqual(a["gen_ai.tool.name"], "world.tools.file.read")
          assert.isString(a["gen_ai.tool.call.id"])
          assert.strictEqual(a["gen_ai.tool.call.id"], a["ugent.trace.id"])
          assert.isString(a["gen_ai.tool.description"])
          assert.strictEqual(a["ugent.tool.name"], "file.read")
        })
      )
  )

  it.effect("by default it sends OTLP/HTTP protobuf, to the traces endpoint as given, named ugent", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const otlp = yield* receiver
        yield* readOnTheRoad({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.endpoint}/custom/traces` })
        assert.isAbove(otlp.received.length, 0)
        const request = otlp.received[0]!
        assert.strictEqual(request.url, "/custom/traces")
        assert.strictEqual(request.headers["content-type"], "application/x-protobuf")
        // Protobuf carries strings as they are: the service, the tool span and its GenAI operation.
        const body = Buffer.concat(otlp.received.map((r) => r.body))
        for (const text of ["ugent", "world.tools.file.read", "gen_ai.operation.name", "execute_tool"]) {
          assert.isAbove(body.indexOf(text), -1, text)
        }
      })
    )
  )

  it.effect("without an endpoint, or with traces turned off, nothing is sent", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const otlp = yield* receiver
        yield* readOnTheRoad({})
        yield* readOnTheRoad({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_SDK_DISABLED: "true" })
        yield* readOnTheRoad({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_TRACES_EXPORTER: "none" })
        assert.strictEqual(otlp.received.length, 0)
        const off = yield* Telemetry.settings.pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
        )
        assert.isTrue(Option.isNone(off))
      })
    )
  )

  it.effect("a value it cannot use is a TelemetryConfigError that names the variable", () =>
    Effect.gen(function* () {
      const failure = (env: Record<string, string>) =>
        Effect.exit(
          Effect.scoped(Effect.void.pipe(Effect.provide(Telemetry.layer()))).pipe(
            Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
          )
        )
      const cases: Array<[Record<string, string>, string]> = [
        [
          { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
          "OTEL_EXPORTER_OTLP_PROTOCOL"
        ],
        [{ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }, "OTEL_EXPORTER_OTLP_ENDPOINT"],
        [
          { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_BSP_SCHEDULE_DELAY: "soon" },
          "OTEL_BSP_SCHEDULE_DELAY"
        ]
      ]
      for (const [env, variable] of cases) {
        const exit = yield* failure(env)
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
        assert.instanceOf(error, Telemetry.TelemetryConfigError)
        assert.strictEqual((error as Telemetry.TelemetryConfigError).variable, variable)
      }
    })
  )
})
