// The Vercel AI SDK's OpenAI provider on the Responses API, pointed at the
// bridge, for a model name the SDK does not know as a reasoning model (a
// local name such as `qwen3`): one streamed answer, with the provider options
// given as JSON. Prints JSON: the `reasoning` field of the request the SDK
// sent (absent unless it treats the model as a reasoning model), its
// warnings, and the text and reasoning as the SDK surfaces them.
//
// Usage: node local_reasoning.mjs BASE_URL MODEL PROMPT PROVIDER_OPTIONS_JSON

import { createOpenAI } from "@ai-sdk/openai";
import { streamText } from "ai";

const [baseURL, model, prompt, options] = process.argv.slice(2);
const sent = [];
// Records each request body, to show what the SDK asks of the bridge.
const recordingFetch = async (url, init) => {
  sent.push(JSON.parse(init.body));
  return fetch(url, init);
};
const openai = createOpenAI({ baseURL, apiKey: "sk-vercel-test", fetch: recordingFetch });

const streamed = streamText({
  model: openai.responses(model),
  prompt,
  providerOptions: { openai: JSON.parse(options) },
  maxRetries: 0,
});
const parts = [];
for await (const part of streamed.fullStream) {
  if (part.type === "error") throw part.error;
  parts.push(part.type);
}

console.log(
  JSON.stringify({
    requestReasoning: sent.map((body) => body.reasoning ?? null),
    warnings: (await streamed.warnings).map((w) => w.feature ?? w.message ?? w.type),
    text: await streamed.text,
    reasoning: (await streamed.finalStep).reasoningText ?? null,
    reasoningDeltas: parts.filter((t) => t === "reasoning-delta").length,
    finishReason: await streamed.finishReason,
  }),
);
