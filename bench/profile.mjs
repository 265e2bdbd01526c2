// Optional CPU profile of the Keyway isolate during one benchmark (`npm run bench --
// --profile=<benchmark>`): V8's sampling profiler over workerd's inspector (Chrome DevTools
// protocol), summarised by source module (esbuild's `// src/…` markers in the bundle) and
// by function, by self time. Cheap: no extra tooling, only while asked for.
import { readFile, writeFile } from "node:fs/promises";
import WebSocket from "ws";

/** Attach to a workerd worker's inspector target (e.g. `core:user:keyway`). */
export async function attachProfiler(inspectorUrl, target) {
  const ws = new WebSocket(`${inspectorUrl.replace(/\/$/, "")}/${target}`);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let nextId = 1;
  const pending = new Map();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data));
    const waiter = msg.id !== undefined ? pending.get(msg.id) : undefined;
    if (!waiter) return;
    pending.delete(msg.id);
    if (msg.error) waiter.reject(new Error(`${msg.error.message} (${msg.error.code})`));
    else waiter.resolve(msg.result);
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  return {
    start: () => send("Profiler.start"),
    async stop() {
      const { profile } = await send("Profiler.stop");
      ws.close();
      return profile;
    },
  };
}

/** Module of each bundle line, from esbuild's `// src/…` / `// node_modules/…` markers. */
async function moduleIndex(bundlePath) {
  const lines = (await readFile(bundlePath, "utf8")).split("\n");
  const marks = [];
  lines.forEach((line, i) => {
    const m = /^\/\/ ((?:src|node_modules|bench)\/\S+)$/.exec(line);
    if (m)
      marks.push({
        line: i,
        module: m[1].replace(/^node_modules\/(?:\.pnpm\/)?((?:@[^/]+\/)?[^/]+).*$/, "node_modules/$1"),
      });
  });
  return (line) => {
    let lo = 0;
    let hi = marks.length - 1;
    let found = "(bundle prelude)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (marks[mid].line <= line) {
        found = marks[mid].module;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** Self time by module and by function; writes the raw profile next to the JSON results. */
export async function summariseProfile(profile, bundlePath, outPath) {
  await writeFile(outPath, JSON.stringify(profile));
  const moduleOf = await moduleIndex(bundlePath);
  const selfUs = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  let total = 0;
  const modules = new Map();
  const functions = new Map();
  for (const [id, us] of selfUs) {
    total += us;
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const inBundle = frame.url && bundlePath.endsWith(frame.url.replace(/^.*\//, ""));
    const module = inBundle
      ? moduleOf(frame.lineNumber)
      : frame.url
        ? frame.url.replace(/^.*\//, "")
        : `(${frame.functionName || "native"})`;
    const fn = `${frame.functionName || "(anonymous)"} ${module}${inBundle ? `:${frame.lineNumber + 1}` : ""}`;
    modules.set(module, (modules.get(module) ?? 0) + us);
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  const top = (map, n) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, ms: us / 1000, share: total > 0 ? us / total : 0 }));
  return { totalMs: total / 1000, modules: top(modules, 15), functions: top(functions, 20) };
}
