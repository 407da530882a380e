// openai.mjs drives slipstream with the official openai SDK: Chat
// Completions streamed and not, Responses streamed and not, and a tool call
// on each API. Prints what the SDK parsed as JSON.
import OpenAI from 'openai';
import { env, runCases, weatherSchema } from './common.mjs';

const client = new OpenAI({ baseURL: env.base + '/v1', apiKey: env.key, maxRetries: 0, timeout: 20000 });
const hello = [{ role: 'user', content: 'Say hello.' }];
const chatTools = [{ type: 'function', function: { name: env.tool, description: 'Weather for a city.', parameters: weatherSchema } }];
const respTools = [{ type: 'function', name: env.tool, description: 'Weather for a city.', parameters: weatherSchema }];

await runCases({
  async chat() {
    const r = await client.chat.completions.create({ model: env.model, messages: hello });
    const c = r.choices[0];
    return { text: c.message.content, finish: c.finish_reason, usage: r.usage, object: r.object };
  },
  async chat_stream() {
    const s = await client.chat.completions.create({
      model: env.model, messages: hello, stream: true, stream_options: { include_usage: true },
    });
    let text = '', finish = null, usage = null, chunks = 0, roles = 0;
    for await (const ch of s) {
      chunks++;
      if (ch.usage) usage = ch.usage;
      for (const c of ch.choices) {
        if (c.delta?.role) roles++;
        if (c.delta?.content) text += c.delta.content;
        if (c.finish_reason) finish = c.finish_reason;
      }
    }
    return { text, finish, usage, chunks, roles };
  },
  async chat_tool() {
    const r = await client.chat.completions.create({
      model: env.model, messages: [{ role: 'user', content: `Please call ${env.tool} now.` }], tools: chatTools,
    });
    const c = r.choices[0];
    const tc = c.message.tool_calls?.[0];
    return { finish: c.finish_reason, tool: tc?.function?.name, id: tc?.id, arguments: tc?.function?.arguments, usage: r.usage };
  },
  async chat_tool_stream() {
    // The SDK's stream helper accumulates tool-call fragments by index.
    const s = client.chat.completions.stream({
      model: env.model, messages: [{ role: 'user', content: `Please call ${env.tool} now.` }], tools: chatTools,
      stream_options: { include_usage: true },
    });
    const r = await s.finalChatCompletion();
    const c = r.choices[0];
    const tc = c.message.tool_calls?.[0];
    return { finish: c.finish_reason, tool: tc?.function?.name, id: tc?.id, arguments: tc?.function?.arguments, usage: r.usage };
  },
  async responses() {
    const r = await client.responses.create({ model: env.model, input: 'Say hello.' });
    return { text: r.output_text, status: r.status, usage: r.usage };
  },
  async responses_stream() {
    const s = await client.responses.create({ model: env.model, input: 'Say hello.', stream: true });
    let text = '', done = '', usage = null, status = null, types = [];
    for await (const ev of s) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.output_text.done') done = ev.text;
      if (ev.type === 'response.completed') { usage = ev.response.usage; status = ev.response.status; }
    }
    return { text, done, usage, status, types };
  },
  async responses_tool_stream() {
    const s = client.responses.stream({
      model: env.model, input: `Please call ${env.tool} now.`, tools: respTools,
    });
    const r = await s.finalResponse();
    const fc = r.output.find((o) => o.type === 'function_call');
    return { status: r.status, tool: fc?.name, id: fc?.call_id, arguments: fc?.arguments, usage: r.usage };
  },
});
