/**
 * Telemetry: a server's traces exported to OpenTelemetry when its
 * environment asks for them, by Effect's own OTLP exporter
 * (`effect/observability`). With `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, {@link layer} sends every span
 * over OTLP/HTTP, among them one per tool call with OpenTelemetry's GenAI
 * attributes (`gen_ai.operation.name = "execute_tool"`, see `Traced`); the
 * service is named by `OTEL_SERVICE_NAME` (default `ugent`) and described by
 * `OTEL_RESOURCE_ATTRIBUTES`. Otherwise the layer is empty and nothing of the
 * exporter is loaded.
 *
 * The standard variables it reads: `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER`
 * (`otlp` by default; `none` turns traces off), the endpoints,
 * `OTEL_EXPORTER_OTLP[_TRACES]_PROTOCOL` (`http/protobuf` by default, or
 * `http/json`; gRPC is not supported), `OTEL_EXPORTER_OTLP[_TRACES]_HEADERS`,
 * `OTEL_EXPORTER_OTLP[_TRACES]_COMPRESSION` and `OTEL_BSP_SCHEDULE_DELAY`.
 * Spans are sent in batches, and the last ones when the layer's scope closes.
 *
 * @since 0.2.0
 */
import type { ToolError } from "@ugent/core"
import { Config, Effect, Layer, Option, Schema } from "effect"

/**
 * Where and how the traces go, as the environment says.
 *
 * @category models
 * @since 0.2.0
 */
export interface Settings {
  /** The traces endpoint, e.g. `http://127.0.0.1:4318/v1/traces`. */
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Readonly<Record<string, string>>
  readonly compression: "gzip" | "none"
  /** How long spans wait to be sent in a batch, in milliseconds (default 5000). */
  readonly exportIntervalMillis: number | undefined
  /** The `service.name` and `service.version` the environment gives, if any. */
  readonly serviceName: string | undefined
  readonly serviceVersion: string | undefined
}

/**
 * A telemetry variable of the environment has a value ugent cannot use.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { Telemetry } from "@ugent/agentese"
 * const e = new Telemetry.TelemetryConfigError({ variable: "OTEL_EXPORTER_OTLP_PROTOCOL", problem: "is grpc, which ugent does not export" })
 * console.log(e.message)
 * // => OTEL_EXPORTER_OTLP_PROTOCOL is grpc, which ugent does not export: set it to http/protobuf or http/json, or unset it.
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class TelemetryConfigError extends Schema.TaggedError<TelemetryConfigError>()("TelemetryConfigError", {
  variable: Schema.String,
  problem: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `${this.variable} ${this.problem}: ${
      this.variable.endsWith("PROTOCOL")
        ? "set it to http/protobuf or http/json, or unset it"
        : "correct it, or unset it to send no traces"
    }.`
  }
}

const variable = (name: string) => Config.option(Config.String(name)).pipe(Config.map(Option.map((v) => v.trim())))

/** `key=value,key2=value2`, values percent-encoded (the W3C baggage form the OTLP variables use). */
const pairs = (text: string): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const entry of text.split(",")) {
    const at = entry.indexOf("=")
    if (at <= 0) continue
    const key = decodeURIComponent(entry.slice(0, at).trim())
    if (key !== "") out[key] = decodeURIComponent(entry.slice(at + 1).trim())
  }
  return out
}

const invalid = (name: string, problem: string) => new TelemetryConfigError({ variable: name, problem })

/**
 * Reads the standard OpenTelemetry variables: the settings when traces are
 * to be exported, none when they are not (no endpoint, `OTEL_SDK_DISABLED`,
 * or `OTEL_TRACES_EXPORTER` without `otlp`).
 *
 * **Example** (Settings from an environment)
 * ```ts
 * import { Telemetry } from "@ugent/agentese"
 * import { ConfigProvider, Effect } from "effect"
 * const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }
 * const settings = await Effect.runPromise(
 *   Telemetry.settings.pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
 * )
 * console.log(settings._tag === "Some" && [settings.value.url, settings.value.protocol])
 * // => [ 'http://127.0.0.1:4318/v1/traces', 'http/json' ]
 * ```
 *
 * @category configuration
 * @since 0.2.0
 */
export const settings: Effect.Effect<Option.Option<Settings>, TelemetryConfigError> = Effect.gen(function* () {
  const env = yield* Config.all({
    disabled: variable("OTEL_SDK_DISABLED"),
    exporter: variable("OTEL_TRACES_EXPORTER"),
    tracesEndpoint: variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
    endpoint: variable("OTEL_EXPORTER_OTLP_ENDPOINT"),
    tracesProtocol: variable("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
    protocol: variable("OTEL_EXPORTER_OTLP_PROTOCOL"),
    tracesHeaders: variable("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
    headers: variable("OTEL_EXPORTER_OTLP_HEADERS"),
    tracesCompression: variable("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"),
    compression: variable("OTEL_EXPORTER_OTLP_COMPRESSION"),
    scheduleDelay: variable("OTEL_BSP_SCHEDULE_DELAY"),
    serviceName: variable("OTEL_SERVICE_NAME"),
    serviceVersion: variable("OTEL_SERVICE_VERSION"),
    resourceAttributes: variable("OTEL_RESOURCE_ATTRIBUTES")
  }).pipe(Effect.orDie)
  const value = (o: Option.Option<string>) => (Option.isSome(o) && o.value !== "" ? o.value : undefined)
  const pick = (specific: Option.Option<string>, general: Option.Option<string>) => value(specific) ?? value(general)

  if (value(env.disabled)?.toLowerCase() === "true") return Option.none()
  const exporters = (value(env.exporter) ?? "otlp").split(",").map((e) => e.trim().toLowerCase())
  if (!exporters.includes("otlp")) return Option.none()

  const specific = value(env.tracesEndpoint)
  const base = value(env.endpoint)
  if (specific === undefined && base === undefined) return Option.none()
  const name = specific !== undefined ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT"
  const url = yield* Effect.try({
    try: () => {
      const parsed = new URL(specific ?? base!)
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http")
      if (specific === undefined) parsed.pathname = `${parsed.pathname.replace(/\/$/, "")}/v1/traces`
      return parsed.toString()
    },
    catch: () => invalid(name, `is not an http(s) URL (${specific ?? base})`)
  })

  const protocolName =
    value(env.tracesProtocol) !== undefined ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL"
  const protocol = pick(env.tracesProtocol, env.protocol) ?? "http/protobuf"
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    return yield* invalid(protocolName, `is ${protocol}, which ugent does not export`)
  }
  const compression = pick(env.tracesCompression, env.compression) ?? "none"
  if (compression !== "gzip" && compression !== "none") {
    return yield* invalid("OTEL_EXPORTER_OTLP_COMPRESSION", `is ${compression}, not gzip or none`)
  }
  const delay = value(env.scheduleDelay)
  const exportIntervalMillis = delay === undefined ? undefined : Number(delay)
  if (exportIntervalMillis !== undefined && !(Number.isInteger(exportIntervalMillis) && exportIntervalMillis > 0)) {
    return yield* invalid("OTEL_BSP_SCHEDULE_DELAY", `is ${delay}, not a number of milliseconds`)
  }
  const headersText = pick(env.tracesHeaders, env.headers)
  const resource = pairs(value(env.resourceAttributes) ?? "")
  return Option.some({
    url,
    protocol,
    headers: headersText === undefined ? {} : pairs(headersText),
    compression,
    exportIntervalMillis,
    serviceName: value(env.serviceName) ?? resource["service.name"],
    serviceVersion: value(env.serviceVersion) ?? resource["service.version"]
  })
})

/**
 * Exports the traces of whatever runs under it when the environment asks
 * for it (see the module documentation); empty otherwise. `serviceName`
 * (default `"ugent"`) and `serviceVersion` name the service when the
 * environment does not. Provide it around a whole program
 * (`Effect.provide(program, Telemetry.layer())`), so every fiber of the
 * program, and every span, has the exporter; when the program ends, the last
 * spans are sent.
 *
 * **Example** (No endpoint: nothing is exported, nothing is loaded)
 * ```ts
 * import { Telemetry } from "@ugent/agentese"
 * import { ConfigProvider, Effect } from "effect"
 * const program = Effect.succeed("done").pipe(Effect.withSpan("work"))
 * const result = await Effect.runPromise(
 *   program.pipe(
 *     Effect.provide(Telemetry.layer()),
 *     Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
 *   )
 * )
 * console.log(result)
 * // => done
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (
  options: { readonly serviceName?: string | undefined; readonly serviceVersion?: string | undefined } = {}
): Layer.Layer<never, TelemetryConfigError> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const found = yield* settings
      if (Option.isNone(found)) return Layer.empty
      const s = found.value
      // The exporter is imported only when traces are exported.
      const [OtlpTracer, OtlpSerialization, FetchHttpClient] = yield* Effect.promise(() =>
        Promise.all([
          import("effect/observability/OtlpTracer"),
          import("effect/observability/OtlpSerialization"),
          import("effect/http/FetchHttpClient")
        ])
      )
      const otlp: Layer.Layer<never> = OtlpTracer.layer({
        url: s.url,
        headers: s.headers,
        compression: s.compression,
        exportInterval: s.exportIntervalMillis,
        resource: {
          // Given only when the environment names none: given values would override the environment's.
          serviceName: s.serviceName === undefined ? (options.serviceName ?? "ugent") : undefined,
          serviceVersion: s.serviceVersion === undefined ? options.serviceVersion : undefined
        }
      }).pipe(
        Layer.provide(s.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(FetchHttpClient.layer)
      )
      return otlp
    })
  )
