// Shared helpers for the SDK scripts: read the environment the Go test
// sets, run each case, and print one JSON object with every case's result
// (or its error) on stdout. A failing case never hides the others.

export const env = {
  base: process.env.SLIPSTREAM_URL, // http://127.0.0.1:PORT
  key: process.env.SLIPSTREAM_KEY,
  model: process.env.SLIPSTREAM_MODEL || 'mock-e2e',
  tool: process.env.SLIPSTREAM_TOOL || 'get_weather',
};

if (!env.base || !env.key) {
  console.error('SLIPSTREAM_URL and SLIPSTREAM_KEY must be set');
  process.exit(2);
}

// runCases runs each named async case in order and prints
// {"case": {...result} | {"error": "..."}}.
export async function runCases(cases) {
  const out = {};
  for (const [name, fn] of Object.entries(cases)) {
    try {
      out[name] = await fn();
    } catch (err) {
      out[name] = { error: `${err?.constructor?.name ?? 'Error'}: ${err?.message ?? err}`, status: err?.status ?? null };
    }
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

export const weatherSchema = {
  type: 'object',
  properties: { city: { type: 'string' } },
};
