// The Vercel AI SDK's OpenAI provider pointed at the bridge: `streamText`
// with a get_weather tool the SDK runs itself (`execute`) and a tool loop of
// at most three steps, on the Responses API (`openai.responses(model)`) or
// on Chat Completions (`openai.chat(model)`). Prints JSON: the calls it ran,
// the stream's part types, each step's tool calls and finish reason, the
// final answer.
//
// Usage: node vercel_tools.mjs responses|chat BASE_URL MODEL PROMPT

import { createOpenAI } from "@ai-sdk/openai";
import { isStepCount, jsonSchema, streamText, tool } from "ai";

const [api, baseURL, model, prompt] = process.argv.slice(2);
const openai = createOpenAI({ baseURL, apiKey: "sk-vercel-test" });
const ran = [];
const getWeather = tool({
  description: "Current weather in a city",
  inputSchema: jsonSchema({
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  }),
  execute: async (args) => {
    const output = `${args.city}: sunny, 18 C`;
    ran.push({ name: "get_weather", args, output });
    return output;
  },
});

const result = streamText({
  model: api === "responses" ? openai.responses(model) : openai.chat(model),
  prompt,
  tools: { get_weather: getWeather },
  stopWhen: isStepCount(3),
  maxRetries: 0,
  // The Responses provider stores by default; the loop resends every item.
  providerOptions: { openai: { store: false } },
});
const parts = [];
for await (const part of result.fullStream) {
  if (part.type === "error" || part.type === "tool-error") throw part.error;
  parts.push(part.type);
}
const steps = await result.steps;

console.log(
  JSON.stringify({
    ran,
    parts,
    steps: steps.map((step) => ({
      finishReason: step.finishReason,
      toolCalls: step.toolCalls.map((c) => ({ id: c.toolCallId, name: c.toolName, input: c.input })),
    })),
    text: await result.text,
    finishReason: await result.finishReason,
  }),
);
