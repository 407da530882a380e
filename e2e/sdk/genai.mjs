// genai.mjs drives slipstream with the official @google/genai SDK:
// generateContent and generateContentStream, and a function call. Prints
// what the SDK parsed as JSON.
import { GoogleGenAI } from '@google/genai';
import { env, runCases, weatherSchema } from './common.mjs';

const ai = new GoogleGenAI({ apiKey: env.key, httpOptions: { baseUrl: env.base, timeout: 20000 } });
const tools = [{ functionDeclarations: [{ name: env.tool, description: 'Weather for a city.', parametersJsonSchema: weatherSchema }] }];

function usage(u) {
  return u ? { promptTokenCount: u.promptTokenCount, candidatesTokenCount: u.candidatesTokenCount, totalTokenCount: u.totalTokenCount } : null;
}

await runCases({
  async generate() {
    const r = await ai.models.generateContent({ model: env.model, contents: 'Say hello.' });
    return { text: r.text, finish: r.candidates?.[0]?.finishReason, usage: usage(r.usageMetadata) };
  },
  async generate_stream() {
    const s = await ai.models.generateContentStream({ model: env.model, contents: 'Say hello.' });
    let text = '', finish = null, u = null, chunks = 0;
    for await (const ch of s) {
      chunks++;
      if (ch.text) text += ch.text;
      if (ch.candidates?.[0]?.finishReason) finish = ch.candidates[0].finishReason;
      if (ch.usageMetadata) u = usage(ch.usageMetadata);
    }
    return { text, finish, usage: u, chunks };
  },
  async tool() {
    const r = await ai.models.generateContent({
      model: env.model, contents: `Please call ${env.tool} now.`, config: { tools },
    });
    const fc = r.functionCalls?.[0];
    return { tool: fc?.name, args: fc?.args, finish: r.candidates?.[0]?.finishReason, usage: usage(r.usageMetadata) };
  },
});
