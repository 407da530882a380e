// anthropic.mjs drives slipstream with the official @anthropic-ai/sdk:
// Messages streamed and not, and a tool call streamed and not. Prints what
// the SDK parsed as JSON.
import Anthropic from '@anthropic-ai/sdk';
import { env, runCases, weatherSchema } from './common.mjs';

const client = new Anthropic({ baseURL: env.base, apiKey: env.key, maxRetries: 0, timeout: 20000 });
const hello = [{ role: 'user', content: 'Say hello.' }];
const tools = [{ name: env.tool, description: 'Weather for a city.', input_schema: weatherSchema }];
const callIt = [{ role: 'user', content: `Please call ${env.tool} now.` }];

function summary(m) {
  const text = m.content.filter((b) => b.type === 'text').map((b) => b.text).join('');
  const tu = m.content.find((b) => b.type === 'tool_use');
  return { text, stop: m.stop_reason, usage: m.usage, type: m.type, role: m.role, tool: tu?.name, id: tu?.id, input: tu?.input };
}

await runCases({
  async messages() {
    return summary(await client.messages.create({ model: env.model, max_tokens: 256, messages: hello }));
  },
  async messages_stream() {
    const s = client.messages.stream({ model: env.model, max_tokens: 256, messages: hello });
    let deltas = '';
    s.on('text', (t) => { deltas += t; });
    const m = await s.finalMessage();
    return { ...summary(m), deltas };
  },
  async messages_stream_raw() {
    // The raw event sequence, to check its grammar from Go.
    const s = await client.messages.create({ model: env.model, max_tokens: 256, messages: hello, stream: true });
    const types = [];
    let text = '', usage = {};
    for await (const ev of s) {
      types.push(ev.type);
      if (ev.type === 'message_start') usage = { ...ev.message.usage };
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
      if (ev.type === 'message_delta') usage = { ...usage, ...Object.fromEntries(Object.entries(ev.usage).filter(([, v]) => v != null)) };
    }
    return { text, types, usage };
  },
  async tool() {
    return summary(await client.messages.create({ model: env.model, max_tokens: 256, messages: callIt, tools }));
  },
  async tool_stream() {
    const s = client.messages.stream({ model: env.model, max_tokens: 256, messages: callIt, tools });
    return summary(await s.finalMessage());
  },
});
