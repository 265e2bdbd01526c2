/**
 * The recovery upload (decision N20): `POST /workspaces/:id/state-versions` in HCP's shape
 * (`serial`, `md5`, `lineage`, base64 `state`), owners only, the caller holding the lock,
 * and the same serial and lineage rules as an agent's upload.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { handleFetch } from "../../../../src/index";
import { createAgentToken, createPool, stateWith } from "../../../helpers/agents";
import { createMember, createOrgToken, createTeam, createTeamToken, tfe } from "../../../helpers/nocode";
import { type NoCodeOrg, noCodeOrg } from "../../../helpers/nocode-modules";
import { type AppliedAgentRun, appliedAgentRun, followLink, md5Hex } from "./run-data-helpers";

let ctx: NoCodeOrg;
let applied: AppliedAgentRun;

beforeAll(async () => {
  ctx = await noCodeOrg();
  const poolId = await createPool(ctx);
  const poolToken = (await createAgentToken(poolId, ctx.ownerToken)).token;
  applied = await appliedAgentRun(ctx, poolId, poolToken);
}, 60_000);

/** HCP's request document of a state upload. */
async function upload(state: unknown, overrides: Record<string, unknown> = {}) {
  const bytes = new TextEncoder().encode(JSON.stringify(state));
  const s = state as { serial: number; lineage: string };
  return {
    data: {
      type: "state-versions",
      attributes: {
        serial: s.serial,
        lineage: s.lineage,
        md5: await md5Hex(bytes),
        state: btoa(String.fromCharCode(...bytes)),
        ...overrides,
      },
    },
  };
}

const post = (token: string, body: unknown) =>
  tfe("POST", `workspaces/${applied.workspaceId}/state-versions`, { token, body });
const act = (action: string, token: string) =>
  tfe("POST", `workspaces/${applied.workspaceId}/actions/${action}`, { token });

describe("recovery upload (N20)", () => {
  it("owners only; the caller must hold the lock", async () => {
    const next = await upload(stateWith(2, "lineage-run-data", ["terraform_data.a"]));
    const manager = (await createMember(ctx.org, { "manage-workspaces": true })).token;
    const readTeam = await createTeamToken(await createTeam(ctx.org, { "read-workspaces": true }));
    for (const token of [manager, readTeam, await createOrgToken(ctx.org)])
      expect((await post(token, next)).status).toBe(404);
    const unlocked = await post(ctx.ownerToken, next);
    expect(unlocked.status).toBe(409);
    expect(unlocked.json.errors[0].detail).toContain("locked by you");
    expect((await act("lock", manager)).status).toBe(200);
    expect((await post(ctx.ownerToken, next)).status).toBe(409);
    expect((await act("unlock", manager)).status).toBe(200);
  });

  it("serial, lineage and md5 rules; a valid upload becomes the current state version", async () => {
    expect((await act("lock", ctx.ownerToken)).status).toBe(200);
    const cases: [unknown, number, string][] = [
      [await upload(stateWith(2, "another-lineage", [])), 409, "lineage mismatch"],
      [await upload(stateWith(0, "lineage-run-data", [])), 409, "serial 0 is not above the current 1"],
      [
        await upload(stateWith(1, "lineage-run-data", ["terraform_data.changed"])),
        409,
        "serial 1 is not above the current 1",
      ],
      [await upload(stateWith(2, "lineage-run-data", []), { md5: "0".repeat(32) }), 422, "Md5 does not match"],
      [await upload(stateWith(2, "lineage-run-data", []), { serial: 3 }), 422, "Serial does not match"],
      [await upload(stateWith(2, "lineage-run-data", []), { lineage: "x" }), 422, "Lineage does not match"],
      [await upload(stateWith(2, "lineage-run-data", []), { state: "!!!" }), 422, "base64"],
      [await upload(stateWith(2, "lineage-run-data", []), { state: "QQ==QQ==" }), 422, "base64"],
      [await upload(stateWith(2, "lineage-run-data", []), { state: btoa('{"serial": 2, nope') }), 422, "not JSON"],
      [await upload(stateWith(2, "lineage-run-data", []), { state: btoa("[1]") }), 422, "a state is a JSON object"],
      [{ data: { type: "state-versions", attributes: { serial: 2 } } }, 422, ""],
    ];
    for (const [body, status, detail] of cases) {
      const res = await post(ctx.ownerToken, body);
      expect(res.status, res.text).toBe(status);
      expect(JSON.stringify(res.json.errors)).toContain(detail);
    }
    const before = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version`, {
      token: ctx.ownerToken,
    });
    expect(before.json.data.attributes.serial).toBe(1);

    // The current state again: a no-op (200, no new version).
    const same = JSON.parse(new TextDecoder().decode(applied.stateBytes));
    const noop = await post(ctx.ownerToken, await upload(same));
    expect(noop.status).toBe(200);
    expect(noop.json.data.id).toBe(before.json.data.id);

    const state = stateWith(2, "lineage-run-data", ["terraform_data.a", "terraform_data.b"], {
      name: { value: "recovered", type: "string" },
    });
    const created = await post(ctx.ownerToken, await upload(state));
    expect(created.status).toBe(201);
    expect(created.json.data.attributes).toMatchObject({
      serial: 2,
      lineage: "lineage-run-data",
      "state-kind": "engine",
    });
    expect(created.json.data.relationships.run.data).toBeNull();
    const current = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version`, {
      token: ctx.ownerToken,
    });
    expect(current.json.data.id).toBe(created.json.data.id);
    const downloaded = await followLink(current.json.data.attributes["hosted-state-download-url"]);
    expect(JSON.parse(downloaded.text)).toEqual(state);
    const outputs = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version-outputs`, {
      token: ctx.ownerToken,
    });
    expect(outputs.json.data.map((o: { attributes: { value: unknown } }) => o.attributes.value)).toEqual(["recovered"]);
    const ws = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: ctx.ownerToken });
    expect(ws.json.data.attributes["resource-count"]).toBe(2);
    expect((await act("unlock", ctx.ownerToken)).status).toBe(200);
  });

  it("takes a state near 64 MiB streamed in a chunked body, and refuses one over it with 413 naming the limit", async () => {
    expect((await act("lock", ctx.ownerToken)).status).toBe(200);
    const near = streamedUpload(64 * 1024 * 1024 - 256 * 1024, 3, "lineage-run-data");
    const created = await tfe("POST", `workspaces/${applied.workspaceId}/state-versions`, {
      token: ctx.ownerToken,
      rawBody: near.body,
    });
    expect(created.status, created.text).toBe(201);
    const generated = await near.generated;
    expect(created.json.data.attributes).toMatchObject({ serial: 3, md5: generated.md5, size: generated.length });
    expect(generated.length).toBeGreaterThan(63 * 1024 * 1024);
    const ws = await tfe("GET", `workspaces/${applied.workspaceId}`, { token: ctx.ownerToken });
    expect(ws.json.data.attributes["resource-count"]).toBe(generated.resources);
    // The stored state is the uploaded one, byte for byte.
    const download = await handleFetch(
      new Request(created.json.data.attributes["hosted-state-download-url"]),
      env,
      createExecutionContext(),
    );
    expect(download.status).toBe(200);
    const digest = new crypto.DigestStream("MD5");
    await download.body!.pipeTo(digest);
    expect(hexOf(await digest.digest)).toBe(generated.md5);
    // Its outputs are read from the 64 MiB state as a stream.
    const outputs = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version-outputs`, {
      token: ctx.ownerToken,
    });
    expect(outputs.json.data.map((o: { attributes: { value: unknown } }) => o.attributes.value)).toEqual(["big"]);

    const over = streamedUpload(64 * 1024 * 1024 + 64 * 1024, 4, "lineage-run-data");
    const refused = await tfe("POST", `workspaces/${applied.workspaceId}/state-versions`, {
      token: ctx.ownerToken,
      rawBody: over.body,
    });
    expect(refused.status).toBe(413);
    expect(refused.json.errors[0].detail).toContain("the state is larger than the limit of 64 MiB");
    const current = await tfe("GET", `workspaces/${applied.workspaceId}/current-state-version`, {
      token: ctx.ownerToken,
    });
    expect(current.json.data.id).toBe(created.json.data.id);
    expect((await act("unlock", ctx.ownerToken)).status).toBe(200);
  }, 120_000);
});

const hexOf = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * A recovery document generated as it is read, never held whole: the state (about `size`
 * bytes of resources with 64 KiB attributes) comes first as base64, its md5 last, so the
 * Worker must stream it. `generated` tells what was sent once the body has been read.
 */
function streamedUpload(size: number, serial: number, lineage: string) {
  const encoder = new TextEncoder();
  const digest = new crypto.DigestStream("MD5");
  const writer = digest.getWriter();
  let length = 0;
  let resources = 0;
  let carry = "";
  let stage: "head" | "resources" | "tail" | "done" = "head";
  let resolve!: (v: { md5: string; length: number; resources: number }) => void;
  const generated = new Promise<{ md5: string; length: number; resources: number }>((r) => {
    resolve = r;
  });
  /** The base64 of the state text so far (ASCII), in whole groups of three characters. */
  const encode = async (text: string, final = false) => {
    await writer.write(encoder.encode(text));
    length += text.length;
    carry += text;
    const usable = final ? carry.length : carry.length - (carry.length % 3);
    const out = btoa(carry.slice(0, usable));
    carry = carry.slice(usable);
    return out;
  };
  const blob = "z".repeat(64 * 1024);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (stage === "head") {
        stage = "resources";
        const head = `{"version":4,"serial":${serial},"lineage":"${lineage}","outputs":{"name":{"value":"big","type":"string"}},"resources":[`;
        controller.enqueue(
          encoder.encode(`{"data":{"type":"state-versions","attributes":{"state":"${await encode(head)}`),
        );
      } else if (stage === "resources") {
        const resource = `${resources > 0 ? "," : ""}{"mode":"managed","type":"terraform_data","name":"r${resources}","instances":[{"attributes":{"blob":"${blob}"}}]}`;
        resources++;
        if (length + resource.length + 2 >= size) stage = "tail";
        controller.enqueue(encoder.encode(await encode(resource)));
      } else if (stage === "tail") {
        stage = "done";
        const last = await encode("]}", true);
        await writer.close();
        const md5 = hexOf(await digest.digest);
        resolve({ md5, length, resources });
        controller.enqueue(encoder.encode(`${last}","serial":${serial},"lineage":"${lineage}","md5":"${md5}"}}}`));
      } else controller.close();
    },
  });
  return { body, generated };
}
