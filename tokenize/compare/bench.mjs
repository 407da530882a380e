// bench.mjs counts the inputs of tokenize's BenchmarkCount (mix1MB, all1MB;
// built here the same way as mixText and allText in x_timing_test.go) with
// the official tiktoken (WebAssembly) and gpt-tokenizer, single-threaded,
// and prints the median MB/s of ROUNDS timed runs after one warm-up, with
// the token count so it can be checked against slipstream's.
//
//   npm ci && node bench.mjs [ROUNDS]
import { readFileSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { get_encoding } from "tiktoken";
import * as gptO200k from "gpt-tokenizer/encoding/o200k_base";
import * as gptCl100k from "gpt-tokenizer/encoding/cl100k_base";

const rounds = Number(process.argv[2] ?? 6);
const corpus = join(dirname(fileURLToPath(import.meta.url)), "..", "testdata", "corpus");
const mixFiles = ["prose.en.txt", "code.go.txt", "request.json", "code.py.txt", "code.ts.txt",
  "code.rs.txt", "code.sh.txt", "code.sql.txt"];
const allFiles = readdirSync(corpus).sort();

// repeatFiles mirrors x_timing_test.go: the files, each followed by "\n\n",
// repeated until size bytes, cut, then shortened until valid UTF-8.
function repeatFiles(size, names) {
  const parts = [];
  let n = 0;
  while (n < size) {
    for (const name of names) {
      const b = readFileSync(join(corpus, name));
      parts.push(b, Buffer.from("\n\n"));
      n += b.length + 2;
    }
  }
  let out = Buffer.concat(parts).subarray(0, size);
  const strict = new TextDecoder("utf-8", { fatal: true });
  for (;;) {
    try {
      return strict.decode(out);
    } catch {
      out = out.subarray(0, out.length - 1);
    }
  }
}

const inputs = [["mix1MB", repeatFiles(1 << 20, mixFiles)], ["all1MB", repeatFiles(1 << 20, allFiles)]];

const tk = { o200k_base: get_encoding("o200k_base"), cl100k_base: get_encoding("cl100k_base") };
const gpt = { o200k_base: gptO200k, cl100k_base: gptCl100k };
const counters = [
  ["tiktoken (wasm)", (enc, text) => tk[enc].encode_ordinary(text).length],
  ["gpt-tokenizer", (enc, text) => gpt[enc].countTokens(text)],
  ["gpt-tokenizer, no merge cache", (enc, text) => {
    gpt[enc].clearMergeCache();
    return gpt[enc].countTokens(text);
  }],
];

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

for (const enc of ["o200k_base", "cl100k_base"]) {
  for (const [inName, text] of inputs) {
    const bytes = Buffer.byteLength(text);
    for (const [name, count] of counters) {
      const n = count(enc, text); // warm-up, and the count to check
      const mbs = [];
      for (let i = 0; i < rounds; i++) {
        const t0 = process.hrtime.bigint();
        count(enc, text);
        const dt = Number(process.hrtime.bigint() - t0) / 1e9;
        mbs.push(bytes / dt / 1e6);
      }
      console.log(`${enc}/${inName}\t${name}\t${median(mbs).toFixed(2)} MB/s\t[${Math.min(...mbs).toFixed(2)}-${Math.max(...mbs).toFixed(2)}]\t${n} tokens\t${bytes} bytes`);
    }
  }
}
