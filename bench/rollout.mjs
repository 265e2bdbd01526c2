// The rollout scale check of decision N15: `npm run bench -- --only=rollout`.
// Never part of the default run nor of CI (it takes minutes and 1,000+ workspaces).
//
// 1. An organization, a user token in owners, a registry module `fleet` whose 1.0.0 is
//    uploaded and ingested through the Queue, E1 pinned at 1.0.0.
// 2. One workspace through E4 (auto-apply) whose first run the Queue plans and applies;
//    then ROLLOUT_WORKSPACES + E7_SAMPLE - 1 copies of it written into D1 by the probe
//    Worker (bench/workers/workspace-seed.ts; multi-row INSERTs within D1's 100 bound parameters).
// 3. 1.1.0 published with the same files (an empty plan: `no-changes` confirms it) and E2
//    moving the pin.
// 4. E7 alone, measured in the same run: E7_SAMPLE workspaces each planned by E5
//    (untimed), then their E7s — once one at a time (E7_SEQUENTIAL of them) and once with
//    10 connections (the rest) — and their applies waited for.
// 5. The rollout: `batch-size` 50, `auto-confirm` `no-changes`, over every workspace with
//    an upgrade available (exactly ROLLOUT_WORKSPACES), polled until it ends; then every
//    item must be `applied` and sampled workspaces must run 1.1.0.
//
// Reports workspaces upgraded per second (applied items ÷ seconds from the create request
// to the poll that saw `completed`) and its ratio to E7 alone (E7 requests per second).
import { performance } from "node:perf_hooks";
import { runLoad } from "./load.mjs";
import { moduleTarball, nullResourceModuleMainTf } from "./tarball.mjs";

export const ROLLOUT_WORKSPACES = 1000;
const BATCH_SIZE = 50;
/** Workspaces upgraded by hand (E5 then E7) to measure E7 alone. */
const E7_SAMPLE = 100;
/** Of the sample, E7s sent one at a time; the rest go with 10 connections. */
const E7_SEQUENTIAL = 30;
const E7_CONNECTIONS = 10;
/** Copies written by one probe call. */
const CLONES_PER_CALL = 250;
/** The rollout fails the check when it has not ended after this long, or nothing moved for STALL_S. */
const ROLLOUT_DEADLINE_S = 1200;
const STALL_S = 120;

const JSONAPI = "application/vnd.api+json";

/** The module: one variable with a default, one resource (the same shape as the other no-code benchmarks). */
const FLEET_MODULE = moduleTarball({ "main.tf": nullResourceModuleMainTf("fleet") });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Run the scale check. `api` is scenarios.mjs's apiClient; `probe(path, body)` asks the
 * probe Worker. Returns the figures (or `{ error }`), logging as it goes.
 */
export async function rolloutScale({ origin, api, probe, log }) {
  const t0 = performance.now();
  const since = () => `${((performance.now() - t0) / 1000).toFixed(1)} s`;
  const org = "bench-fleet";

  // ---- 1. Organization, user token, module 1.0.0, E1.
  const orgRes = await api.expectOk("create the organization", "POST", "/api/v2/organizations", {
    bearer: api.admin,
    body: { data: { type: "organizations", attributes: { name: org, email: "fleet@example.test" } } },
  });
  const ownersTeam = orgRes.json?.data?.relationships?.["owners-team"]?.data?.id;
  const project = orgRes.json?.data?.relationships?.["default-project"]?.data?.id;
  const tokenRes = await api.createUserToken("fleet-owner");
  const token = tokenRes.json?.data?.attributes?.token;
  await api.expectOk("add the user to owners", "POST", `/api/v2/teams/${ownersTeam}/relationships/users`, {
    bearer: api.admin,
    body: { data: [{ type: "users", id: "fleet-owner" }] },
  });
  const moduleRes = await api.createRegistryModule("create the registry module", org, token, "fleet");
  const registryModuleId = moduleRes.json?.data?.id;
  const base = `/api/v2/organizations/${org}/registry-modules/private/${org}/fleet/null`;
  const publish = async (version) => {
    const v = await api.expectOk(`create version ${version}`, "POST", `${base}/versions`, {
      bearer: token,
      body: { data: { type: "registry-module-versions", attributes: { version } } },
    });
    await api.expectOk("upload the tarball", "PUT", new URL(v.json.data.links.upload).pathname, {
      raw: FLEET_MODULE,
      contentType: "application/gzip",
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await api.expectOk("read the version", "GET", `${base}/version?module_version=${version}`, {
        bearer: token,
      });
      const status = r.json?.data?.attributes?.status;
      if (status === "ok") return;
      if (status !== "pending" && status !== "reg_ingressing")
        throw new Error(`module version ${version} is ${status}`);
      if (Date.now() > deadline) throw new Error(`module version ${version} still ${status} after 60 s`);
      await sleep(250);
    }
  };
  await publish("1.0.0");
  const moduleDoc = (attributes) => ({
    data: {
      type: "no-code-modules",
      attributes,
      relationships: { "registry-module": { data: { id: registryModuleId, type: "registry-modules" } } },
    },
  });
  const e1 = await api.expectOk("E1", "POST", `/api/v2/organizations/${org}/no-code-modules`, {
    bearer: token,
    body: moduleDoc({ "version-pin": "1.0.0", enabled: true }),
  });
  const moduleId = e1.json.data.id;

  // ---- 2. The template workspace through E4, its first run applied by the Queue; then copies.
  const e4 = await api.expectOk("E4", "POST", `/api/v2/no-code-modules/${moduleId}/workspaces`, {
    bearer: token,
    raw: JSON.stringify({
      data: {
        type: "workspaces",
        attributes: { name: "fleet-template", "auto-apply": true },
        relationships: { project: { data: { id: project, type: "projects" } } },
      },
    }),
    contentType: JSONAPI,
  });
  const template = e4.json.data.id;
  await waitForRuns(api, token, [e4.json.data.relationships["latest-run"].data.id], ["applied"], 60);
  const copies = ROLLOUT_WORKSPACES + E7_SAMPLE - 1;
  const tSeed = performance.now();
  const workspaceIds = [template];
  for (let n = 0; n < copies; n += CLONES_PER_CALL) {
    const count = Math.min(CLONES_PER_CALL, copies - n);
    const out = await probe("/clone-workspaces", {
      templateWorkspaceId: template,
      count,
      namePrefix: `fleet-${n}-`,
      perBatch: 50,
      history: true,
    });
    workspaceIds.push(...out.workspaceIds);
  }
  const seedS = (performance.now() - tSeed) / 1000;
  log(
    `  rollout: ${workspaceIds.length} workspaces of module fleet (1 by E4, ${copies} copies by the probe worker in ${seedS.toFixed(1)} s) (${since()})`,
  );

  // ---- 3. 1.1.0 with the same files, pin moved by E2.
  await publish("1.1.0");
  await api.expectOk("E2 move the pin", "PATCH", `/api/v2/no-code-modules/${moduleId}`, {
    bearer: token,
    body: moduleDoc({ "version-pin": "1.1.0" }),
  });

  // ---- 4. E7 alone: E5 (untimed) on the sample, then their E7s.
  const sample = workspaceIds.slice(0, E7_SAMPLE);
  const upgradePath = (ws, run) =>
    `/api/v2/no-code-modules/${moduleId}/workspaces/${ws}/upgrade${run ? `/${run}` : ""}`;
  const planned = [];
  const tE5 = performance.now();
  for (const ws of sample) {
    const r = await api.expectOk("E5", "POST", upgradePath(ws), {
      bearer: token,
      body: { data: { type: "workspaces", relationships: { vars: { data: [] } } } },
    });
    const runId = r.json?.data?.id ?? r.json?.data?.relationships?.run?.data?.id;
    if (!runId) throw new Error(`E5 answered without a run: ${r.text.slice(0, 200)}`);
    planned.push({ ws, runId });
  }
  const e5S = (performance.now() - tE5) / 1000;
  const e7Run = async (list, connections) => {
    let i = 0;
    return runLoad({
      origin,
      connections,
      amount: list.length,
      requests: [
        {
          method: "POST",
          headers: { Authorization: `Bearer ${token}` },
          setupRequest: (req) => {
            const { ws, runId } = list[i++];
            return { ...req, path: upgradePath(ws, runId) };
          },
        },
      ],
    });
  };
  const e7Seq = await e7Run(planned.slice(0, E7_SEQUENTIAL), 1);
  const e7Par = await e7Run(planned.slice(E7_SEQUENTIAL), E7_CONNECTIONS);
  /** @type {[string, typeof e7Seq][]} */
  const e7Runs = [
    ["one at a time", e7Seq],
    [`${E7_CONNECTIONS} connections`, e7Par],
  ];
  for (const [what, r] of e7Runs) {
    if (r.non2xx + r.errors + r.timeouts > 0)
      throw new Error(`E7 (${what}): ${r.non2xx} non-2xx (first ${r.firstBad}), ${r.errors} errors`);
  }
  log(
    `  E7 alone: ${fmt(e7Seq.rps)} req/s one at a time (p50 ${fmt(e7Seq.p50)} ms, ${e7Seq.requests} runs), ` +
      `${fmt(e7Par.rps)} req/s with ${E7_CONNECTIONS} connections (p50 ${fmt(e7Par.p50)} ms, ${e7Par.requests} runs); ` +
      `E5 one at a time ${fmt(E7_SAMPLE / e5S)} req/s (${since()})`,
  );
  const tApplies = performance.now();
  await waitForRuns(
    api,
    token,
    planned.map((p) => p.runId),
    ["applied"],
    300,
  );
  const sampleApplyS = (performance.now() - tApplies) / 1000;
  log(`  the sample's ${E7_SAMPLE} applies finished ${sampleApplyS.toFixed(1)} s after the last E7 (${since()})`);

  // ---- 5. The rollout.
  const tRollout = performance.now();
  const created = await api.expectOk(
    "create the rollout",
    "POST",
    `/api/v2/no-code-modules/${moduleId}/upgrade-rollouts`,
    {
      bearer: token,
      body: {
        data: { type: "upgrade-rollouts", attributes: { "batch-size": BATCH_SIZE, "auto-confirm": "no-changes" } },
      },
    },
  );
  const createS = (performance.now() - tRollout) / 1000;
  const rolloutId = created.json.data.id;
  const itemCount = created.json.data.attributes.items.length;
  if (itemCount !== ROLLOUT_WORKSPACES)
    throw new Error(`the rollout holds ${itemCount} workspaces, expected ${ROLLOUT_WORKSPACES}`);
  log(
    `  rollout ${rolloutId}: ${itemCount} workspaces in ${created.json.data.attributes["batch-count"]} batches of ${BATCH_SIZE}, created in ${createS.toFixed(2)} s`,
  );

  let last = null;
  let lastChange = performance.now();
  let lastLog = 0;
  let final = null;
  for (;;) {
    await sleep(1000);
    const r = await api.expectOk("read the rollout", "GET", `/api/v2/upgrade-rollouts/${rolloutId}`, { bearer: token });
    const a = r.json.data.attributes;
    const counts = countBy(a.items.map((i) => i.status));
    const key = `${a.status} ${a["current-batch"]} ${JSON.stringify(counts)}`;
    const s = (performance.now() - tRollout) / 1000;
    if (key !== last) {
      last = key;
      lastChange = performance.now();
    }
    if (s - lastLog >= 10 || ["completed", "failed", "canceled"].includes(a.status)) {
      lastLog = s;
      log(
        `    ${s.toFixed(0)} s: ${a.status}, batch ${a["current-batch"]}/${a["batch-count"]}, items ${fmtCounts(counts)}`,
      );
    }
    if (["completed", "failed", "canceled"].includes(a.status)) {
      final = { status: a.status, reason: a.reason, seconds: s, counts, items: a.items };
      break;
    }
    if (s > ROLLOUT_DEADLINE_S || (performance.now() - lastChange) / 1000 > STALL_S) {
      final = {
        status: a.status,
        reason: `did not end: ${s > ROLLOUT_DEADLINE_S ? "deadline" : `nothing moved for ${STALL_S} s`}`,
        seconds: s,
        counts,
        items: a.items,
        stalled: true,
      };
      break;
    }
  }
  const applied = final.counts.applied ?? 0;
  const notApplied = final.items.filter((i) => i.status !== "applied").slice(0, 5);
  // Spot check: workspaces from the first, a middle and the last batch run 1.1.0.
  const spot = [final.items[0], final.items[Math.floor(final.items.length / 2)], final.items[final.items.length - 1]];
  const versions = [];
  for (const item of spot) {
    const w = await api.expectOk("read a workspace", "GET", `/api/v2/workspaces/${item.workspace}`, { bearer: token });
    versions.push(
      w.json?.data?.attributes?.["no-code-version"] ?? w.json?.data?.attributes?.["source-module-id"] ?? "?",
    );
  }
  const perSecond = applied / final.seconds;
  const result = {
    workspaces: ROLLOUT_WORKSPACES,
    batchSize: BATCH_SIZE,
    autoConfirm: "no-changes",
    status: final.status,
    reason: final.reason,
    seconds: final.seconds,
    applied,
    counts: final.counts,
    perSecond,
    createSeconds: createS,
    seedSeconds: seedS,
    e7: {
      sequentialRps: e7Seq.rps,
      sequentialP50: e7Seq.p50,
      parallelRps: e7Par.rps,
      parallelP50: e7Par.p50,
      connections: E7_CONNECTIONS,
    },
    e5SequentialRps: E7_SAMPLE / e5S,
    sampleApplySeconds: sampleApplyS,
    xE7Sequential: perSecond / e7Seq.rps,
    xE7Parallel: perSecond / e7Par.rps,
    spotVersions: versions,
    notApplied,
  };
  log(
    `  rollout ${final.status}${final.reason ? ` (${final.reason})` : ""}: ${applied}/${ROLLOUT_WORKSPACES} applied in ${final.seconds.toFixed(1)} s = ` +
      `${fmt(perSecond)} workspaces/s; ${fmt(result.xE7Sequential)} × E7 one at a time, ${fmt(result.xE7Parallel)} × E7 with ${E7_CONNECTIONS} connections; ` +
      `spot-checked workspaces run ${versions.join(", ")}`,
  );
  if (notApplied.length > 0) log(`  not applied (first ${notApplied.length}): ${JSON.stringify(notApplied)}`);
  const met = final.status === "completed" && applied === ROLLOUT_WORKSPACES;
  console.log(
    `target rollout-1000: ${met ? "met" : "missed"} — ${applied}/${ROLLOUT_WORKSPACES} applied, rollout ${final.status}, ${fmt(perSecond)} workspaces/s`,
  );
  return result;
}

/** Poll GET /runs/:id until every run is in one of `statuses` (throws after `timeoutS`). */
async function waitForRuns(api, token, runIds, statuses, timeoutS) {
  const deadline = Date.now() + timeoutS * 1000;
  let left = [...runIds];
  while (left.length > 0) {
    const next = [];
    for (const id of left) {
      const r = await api.expectOk("read a run", "GET", `/api/v2/runs/${id}`, { bearer: token });
      const status = r.json?.data?.attributes?.status;
      if (status === "errored" || status === "discarded" || status === "canceled")
        throw new Error(`run ${id} is ${status}`);
      if (!statuses.includes(status)) next.push(id);
    }
    left = next;
    if (left.length === 0) break;
    if (Date.now() > deadline) throw new Error(`${left.length} run(s) not ${statuses.join("|")} after ${timeoutS} s`);
    await sleep(500);
  }
}

function countBy(values) {
  const out = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

const fmtCounts = (counts) =>
  Object.entries(counts)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");

function fmt(x) {
  if (x === null || x === undefined || Number.isNaN(x)) return "–";
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}
