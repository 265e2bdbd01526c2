// Load generation for `npm run bench`: autocannon in this process, with every response's
// latency recorded at full precision (autocannon's own histogram keeps whole milliseconds,
// too coarse for sub-millisecond paths) and every non-2xx answer counted.
import autocannon from "autocannon";

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/**
 * One autocannon run against `origin`.
 * @param {object} o
 * @param {string} o.origin  e.g. http://127.0.0.1:PORT
 * @param {object[]} o.requests  autocannon request objects (method, path, headers, body, setupRequest, onResponse)
 * @param {number} o.connections
 * @param {number} [o.durationS]  stop after this many seconds
 * @param {number} [o.amount]  stop after this many responses (whichever comes first with durationS)
 * @returns {Promise<{requests:number, seconds:number, rps:number, p50:number|null, p90:number|null, p99:number|null,
 *   mean:number|null, max:number|null, non2xx:number, firstBad:number|null, latencies:number[], errors:number,
 *   errorKinds:Record<string,number>, timeouts:number, statuses:Record<string,number>}>} `requests`, `rps` and the latencies (ms, ascending) cover
 *   2xx answers only
 */
export function runLoad({ origin, requests, connections, durationS, amount }) {
  return new Promise((resolve, reject) => {
    const latencies = [];
    /** @type {Record<string, number>} */
    const statuses = {};
    /** @type {Record<string, number>} */
    const errorKinds = {};
    let non2xx = 0;
    let firstBad = null;
    const opts = {
      url: origin,
      connections: amount ? Math.min(connections, amount) : connections,
      pipelining: 1,
      timeout: 30,
      requests,
    };
    if (amount) opts.amount = amount;
    else opts.duration = durationS;
    const startedAt = process.hrtime.bigint();
    let stopTimer = null;
    const instance = autocannon(opts, (err, result) => {
      if (stopTimer) clearTimeout(stopTimer);
      if (err) return reject(err);
      const seconds = Number(process.hrtime.bigint() - startedAt) / 1e9;
      latencies.sort((a, b) => a - b);
      const total = latencies.length;
      resolve({
        requests: total,
        seconds,
        rps: total / seconds,
        p50: percentile(latencies, 50),
        p90: percentile(latencies, 90),
        p99: percentile(latencies, 99),
        mean: total > 0 ? latencies.reduce((a, b) => a + b, 0) / total : null,
        max: total > 0 ? latencies[total - 1] : null,
        non2xx,
        firstBad,
        latencies,
        errors: result.errors,
        errorKinds,
        timeouts: result.timeouts,
        statuses,
      });
    });
    instance.on("reqError", (err) => {
      const kind = err?.code ?? err?.message ?? String(err);
      errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
    });
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      // Rates and latencies count 2xx answers only (as autocannon's own figures do).
      if (statusCode >= 200 && statusCode <= 299) latencies.push(responseTime);
      else {
        non2xx++;
        firstBad ??= statusCode;
      }
    });
    if (amount && durationS) stopTimer = setTimeout(() => instance.stop(), durationS * 1000);
  });
}

/** Sums of several runs of one request set (slices of a paired run). */
export function combineRuns(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const sum = (k) => runs.reduce((a, r) => a + r[k], 0);
  const seconds = sum("seconds");
  const statuses = {};
  for (const r of runs) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  return {
    requests: latencies.length,
    seconds,
    rps: seconds > 0 ? latencies.length / seconds : 0,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    mean: latencies.length > 0 ? latencies.reduce((a, b) => a + b, 0) / latencies.length : null,
    non2xx: sum("non2xx"),
    errors: sum("errors"),
    timeouts: sum("timeouts"),
    statuses,
    sliceRps: runs.map((r) => r.rps),
  };
}
