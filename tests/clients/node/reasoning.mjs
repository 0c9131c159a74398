// The Vercel AI SDK's OpenAI provider on the Responses API, pointed at the
// bridge: one streamed and one non-streamed answer from a model asked to
// reason, printed as JSON (text and reasoning as the SDK surfaces them).
//
// Usage: node reasoning.mjs BASE_URL MODEL PROMPT

import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";

const [baseURL, model, prompt] = process.argv.slice(2);
const openai = createOpenAI({ baseURL, apiKey: "sk-vercel-test" });
const providerOptions = {
  openai: { forceReasoning: true, reasoningEffort: "low", reasoningSummary: "auto", store: false },
};

const streamed = streamText({ model: openai.responses(model), prompt, providerOptions, maxRetries: 0 });
const parts = [];
for await (const part of streamed.fullStream) {
  if (part.type === "error") throw part.error;
  parts.push(part.type);
}
const generated = await generateText({ model: openai.responses(model), prompt, providerOptions, maxRetries: 0 });

console.log(
  JSON.stringify({
    stream: {
      text: await streamed.text,
      reasoning: (await streamed.finalStep).reasoningText,
      finishReason: await streamed.finishReason,
      reasoningDeltas: parts.filter((t) => t === "reasoning-delta").length,
    },
    generate: {
      text: generated.text,
      reasoning: generated.finalStep.reasoningText,
      finishReason: generated.finishReason,
    },
  }),
);
