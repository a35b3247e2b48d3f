/**
 * `@ugent/agentese/providers`: model providers written over Effect's
 * `HttpClient`, each an `effect/ai` `LanguageModel`: the OpenAI Chat
 * Completions API (also Ollama, vLLM, LM Studio and other OpenAI-compatible
 * servers), the OpenAI Responses API and the Anthropic Messages API; and
 * `Model`, which picks one from the environment (`UGENT_MODEL`) and checks
 * it before the first step.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as OpenAiChat from "./OpenAiChat.ts"
/** @since 0.2.0 */
export * as OpenAiResponses from "./OpenAiResponses.ts"
/** @since 0.2.0 */
export * as Anthropic from "./Anthropic.ts"
/** @since 0.2.0 */
export * as Model from "./Model.ts"
/** @since 0.2.0 */
export * as Scripted from "./Scripted.ts"
