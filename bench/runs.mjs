// `npm run bench -- --runs=N` (docs/performance.md): N whole runs one after another, each in its own
// process (its own bundle, workerd and fresh state), then the median of every figure and the
// `target` lines computed from the medians. The machine's noise spreads one benchmark's
// ratio by about ±15 % between runs, so a target is judged on the median of three runs.
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fmt, targetLine, textTable, writePerformanceDoc } from "./report.mjs";
import { projectRoot } from "./runtime.mjs";

const benchScript = path.join(projectRoot, "bench", "main.mjs");

/** Median of the numbers in `values` (nulls left out); null when there are none. */
export function median(values) {
  const v = values.filter((x) => typeof x === "number" && !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

function runChild(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [benchScript, ...args], { stdio: "inherit" });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

/**
 * The target lines of several runs: each target's median ratio, except no-non-2xx, which
 * counts every bad answer of every run (one bad answer anywhere misses it).
 */
export function medianTargets(reports) {
  const names = [...new Set(reports.flatMap((r) => r.targets.map((t) => t.name)))];
  return names.map((name) => {
    const of = reports.map((r) => r.targets.find((t) => t.name === name)).filter(Boolean);
    const { kind, bound, means } = of[0];
    if (name === "no-non-2xx") {
      const total = reports.reduce((a, r) => a + (r.answers?.total ?? 0), 0);
      const bad = reports.reduce((a, r) => a + (r.answers?.bad ?? 0), 0);
      return targetLine({
        name,
        kind,
        floor: bound,
        ratio: total > 0 ? bad / total : null,
        ratioText: total > 0 ? (bad === 0 ? "0" : fmt(bad / total, 2)) : undefined,
        missedByIfZero: total > 0 ? (bad / total) * 100 : 100,
        means: `${means}; all runs together`,
      });
    }
    // A run where the benchmark was not available counts as missing, not as a figure.
    const ratios = of.map((t) => t.ratio);
    const available = ratios.filter((x) => x !== null && x !== undefined).length;
    const line = targetLine({
      name,
      kind,
      floor: bound,
      ratio: available === reports.length ? median(ratios) : null,
      means,
    });
    return { ...line, runs: ratios };
  });
}

/** Run the bench `options.runs` times, print the medians and their target lines. */
export async function repeatRuns(options, argv, log) {
  const n = options.runs;
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const childArgs = argv.filter((a) => !a.startsWith("--runs") && !a.startsWith("--result") && a !== "--no-doc");
  const reports = [];
  for (let i = 1; i <= n; i++) {
    const file = path.join(projectRoot, "bench-results", `runs-${stamp}-${i}.json`);
    log(`==== run ${i} of ${n} ====`);
    const code = await runChild([...childArgs, "--no-doc", `--result=${file}`]);
    if (code !== 0) {
      log(`run ${i} failed (exit ${code}); its figures are left out`);
      continue;
    }
    reports.push(JSON.parse(await readFile(file, "utf8")));
  }
  if (reports.length === 0) throw new Error("no run finished");

  const names = [...new Set(reports.flatMap((r) => r.results.map((x) => x.name)))];
  const rows = names.map((name) => {
    const of = reports.map((r) => r.results.find((x) => x.name === name)).filter((x) => x?.available);
    const med = (field) => median(of.map((x) => x[field] ?? null));
    const each = (field) => of.map((x) => fmt(x[field] ?? null)).join(" / ");
    return [
      name,
      fmt(med("rps")),
      fmt(med("xFloor")),
      each("xFloor"),
      fmt(med("xRaw")),
      fmt(med("p50")),
      fmt(med("p99")),
      of.reduce((a, x) => a + (x.non2xx ?? 0) + (x.errors ?? 0), 0),
      `${of.length} of ${reports.length} runs`,
    ];
  });
  const table = textTable(
    ["benchmark", "req/s", "× floor", "× floor per run", "× raw", "p50 ms", "p99 ms", "non-2xx", "note"],
    rows,
  );
  const targets = medianTargets(reports);
  const loads = reports.map(
    (r, i) =>
      `run ${i + 1}: ${r.startedAt}, ${fmt(r.totalSeconds)} s, load average before ${r.loadAverage.before.map((l) => l.toFixed(1)).join(" ")} / after ${r.loadAverage.after.map((l) => l.toFixed(1)).join(" ")}`,
  );
  log("");
  log(`medians of ${reports.length} run(s):`);
  log(table);
  log("");
  for (const l of loads) log(l);
  log("");

  const out = path.join(projectRoot, "bench-results", `runs-${stamp}.json`);
  await writeFile(out, `${JSON.stringify({ runs: reports.length, rows, targets, loads }, null, 2)}\n`);
  if (options.doc && !options.only && !options.profile) {
    const m = reports[0].machine;
    const md = [
      `Median of ${reports.length} full runs (\`npm run bench -- --runs=${n}\`). Machine: ${m.nproc} CPU(s), ${m.cpuModel}, ` +
        `${m.memoryGiB} GiB, ${m.os}; Node ${m.node}, workerd ${m.workerd}, wrangler ${m.wrangler}, miniflare ${m.miniflare}, ` +
        `autocannon ${m.autocannon}. Each run as described below; every figure is the median of the runs' figures.`,
      "",
      ...loads.map((l) => `- ${l}`),
      "",
      table,
      "",
      "```",
      ...targets.map((t) => t.line),
      "```",
    ].join("\n");
    await writePerformanceDoc(md);
  }
  log(`wrote ${out}${options.doc && !options.only && !options.profile ? " and docs/performance.md" : ""}`);
  for (const t of targets) console.log(t.line);
}
