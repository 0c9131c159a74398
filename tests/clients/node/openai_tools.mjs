// The official Node SDK (npm `openai`) pointed at the bridge: a tool loop
// through its stream helpers, on the Responses API (`responses.stream()` +
// `finalResponse()`) or on Chat Completions (`chat.completions.stream()` +
// `finalChatCompletion()`). Runs the model's get_weather calls, sends their
// results back, and prints JSON: the calls it ran, the event types of each
// turn, the final answer.
//
// Usage: node openai_tools.mjs responses|chat BASE_URL MODEL PROMPT

import OpenAI from "openai";

const [api, baseURL, model, prompt] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "sk-openai-node-test", maxRetries: 0, timeout: 20_000 });
const parameters = {
  type: "object",
  properties: { city: { type: "string" } },
  required: ["city"],
  additionalProperties: false,
};
const description = "Current weather in a city";
const weather = ({ city }) => `${city}: sunny, 18 C`;
const ran = [];

function run(name, argumentsText) {
  if (name !== "get_weather") throw new Error(`unknown tool ${name}`);
  const args = JSON.parse(argumentsText);
  const output = weather(args);
  ran.push({ name, args, output });
  return output;
}

async function responsesLoop() {
  const tools = [{ type: "function", name: "get_weather", description, parameters, strict: true }];
  const input = [{ role: "user", content: prompt }];
  const turns = [];
  for (let turn = 0; turn < 4; turn++) {
    const stream = client.responses.stream({ model, input, tools });
    const events = [];
    for await (const event of stream) events.push(event.type);
    const response = await stream.finalResponse();
    const calls = response.output.filter((item) => item.type === "function_call");
    turns.push({ events, status: response.status, callIds: calls.map((c) => c.call_id) });
    if (calls.length === 0) return { turns, text: response.output_text };
    input.push(...response.output);
    for (const call of calls) {
      input.push({ type: "function_call_output", call_id: call.call_id, output: run(call.name, call.arguments) });
    }
  }
  throw new Error("no final answer after 4 turns");
}

async function chatLoop() {
  const tools = [{ type: "function", function: { name: "get_weather", description, parameters, strict: true } }];
  const messages = [{ role: "user", content: prompt }];
  const turns = [];
  for (let turn = 0; turn < 4; turn++) {
    const stream = client.chat.completions.stream({ model, messages, tools, stream_options: { include_usage: true } });
    let chunks = 0;
    for await (const _chunk of stream) chunks++;
    const completion = await stream.finalChatCompletion();
    const { message, finish_reason } = completion.choices[0];
    const calls = message.tool_calls ?? [];
    turns.push({ chunks, finishReason: finish_reason, callIds: calls.map((c) => c.id), usage: completion.usage ?? null });
    if (calls.length === 0) return { turns, text: message.content };
    messages.push({
      role: "assistant",
      content: message.content,
      tool_calls: calls.map(({ id, type, function: f }) => ({ id, type, function: { name: f.name, arguments: f.arguments } })),
    });
    for (const call of calls) {
      messages.push({ role: "tool", tool_call_id: call.id, content: run(call.function.name, call.function.arguments) });
    }
  }
  throw new Error("no final answer after 4 turns");
}

const result = api === "responses" ? await responsesLoop() : await chatLoop();
console.log(JSON.stringify({ ...result, ran }));
