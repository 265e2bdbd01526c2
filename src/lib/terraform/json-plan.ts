/**
 * What the control plane reads from an engine's JSON plan (`terraform show -json`, the
 * "JSON Output Format" 1.x: https://developer.hashicorp.com/terraform/internals/json-format)
 * and from a state (version 4): the counts of a plan's resource changes, as HCP Terraform
 * reports them on a plan (a replacement counts as one addition and one destruction), and a
 * state's serial, lineage, resource addresses and outputs. Pure.
 */

import { type JsonPath, type JsonScalar, JsonScanError, JsonScanner, JsonValueBuilder } from "../json/stream-scan";

/** The counts and changes of a JSON plan. */
export interface JsonPlanSummary {
  hasChanges: boolean;
  additions: number;
  changes: number;
  destructions: number;
  imports: number;
  /** Each resource change: its address and actions. */
  resourceChanges: { address: string; actions: string[] }[];
  /** Addresses of the managed resources that exist after the plan is applied. */
  addresses: string[];
}

/** Why a JSON plan or state was refused. */
export class EngineDocumentError extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** One step of a streaming scan; a JSON syntax error is the engine document's refusal. */
function asEngineDocument(step: () => void): void {
  try {
    step();
  } catch (err) {
    throw err instanceof JsonScanError ? new EngineDocumentError(`not JSON (${err.message})`) : err;
  }
}

/** What a state (version 4) says about itself. */
export interface StateSummary {
  serial: number;
  lineage: string;
  /** Addresses of the managed resources. */
  resources: string[];
  outputs: { name: string; sensitive: boolean }[];
}

const RESOURCE_FIELDS = new Set(["mode", "type", "name", "module"]);

/** A value the scanner skipped or did not keep (never equal to a kept value). */
const SKIPPED = Symbol("skipped");

/**
 * A state's summary read in pieces (a state of up to 64 MiB in bounded
 * memory, N20): only the serial, the lineage, each resource's mode, type, name and module,
 * and each output's name and `sensitive` flag are kept; every other value is scanned and
 * dropped. `write` the state's text as it arrives, then `end()`; both throw
 * EngineDocumentError when it is not a state.
 */
export class StateSummaryScanner {
  private serial: unknown;
  private lineage: unknown;
  private resourcesIsArray = false;
  private outputsIsObject = false;
  private topIsObject = false;
  private readonly resources: Partial<Record<string, unknown>>[] = [];
  private readonly outputs = new Map<string, boolean>();
  private readonly scanner = new JsonScanner(
    {
      stringAt: (path) => (this.wanted(path) ? "whole" : "skip"),
      open: (path, kind) => {
        if (path.length === 0) this.topIsObject = kind === "object";
        else if (path.length === 1 && path[0] === "resources") this.resourcesIsArray = kind === "array";
        else if (path.length === 1 && path[0] === "outputs") this.outputsIsObject = kind === "object";
        else this.value(path, undefined);
      },
      scalar: (path, value) => this.value(path, value),
    },
    // Names in a state are short; long strings (attribute values) are skipped, never kept.
    { maxString: 64 * 1024, maxDepth: 256 },
  );

  write(text: string): void {
    asEngineDocument(() => this.scanner.write(text));
  }

  end(): StateSummary {
    asEngineDocument(() => this.scanner.end());
    if (!this.topIsObject) throw new EngineDocumentError("a state is a JSON object");
    const { serial, lineage } = this;
    if (typeof serial !== "number" || !Number.isSafeInteger(serial) || serial < 0)
      throw new EngineDocumentError("a state needs a serial (a non-negative integer)");
    if (typeof lineage !== "string" || lineage === "") throw new EngineDocumentError("a state needs a lineage");
    const resources: string[] = [];
    if (this.resourcesIsArray)
      for (const r of this.resources) {
        if (r?.mode !== "managed" || typeof r.type !== "string" || typeof r.name !== "string") continue;
        resources.push(`${typeof r.module === "string" ? `${r.module}.` : ""}${r.type}.${r.name}`);
      }
    const outputs = this.outputsIsObject ? [...this.outputs].map(([name, sensitive]) => ({ name, sensitive })) : [];
    return { serial, lineage, resources: resources.sort(), outputs };
  }

  private wanted(path: JsonPath): boolean {
    if (path.length === 1) return path[0] === "lineage";
    return (
      path.length === 3 && path[0] === "resources" && this.resourcesIsArray && RESOURCE_FIELDS.has(String(path[2]))
    );
  }

  /** A value at `path` (`undefined` for an object or array). */
  private value(path: JsonPath, value: JsonScalar | undefined): void {
    const [top, second, third] = path;
    if (path.length === 1) {
      // A repeated name counts as JSON.parse counts it: the last one.
      if (top === "serial") this.serial = value;
      else if (top === "lineage") this.lineage = value;
      return;
    }
    if (top === "outputs" && this.outputsIsObject && typeof second === "string") {
      if (path.length === 2) this.outputs.set(second, false);
      else if (path.length === 3 && third === "sensitive") this.outputs.set(second, value === true);
      return;
    }
    if (top === "resources" && this.resourcesIsArray && typeof second === "number") {
      const resource = this.resources[second] ?? {};
      this.resources[second] = resource;
      if (path.length === 3 && typeof third === "string" && RESOURCE_FIELDS.has(third)) resource[third] = value;
    }
  }
}

/**
 * A state's `outputs` object read in pieces, every other part of the state scanned and
 * dropped: reading outputs holds the outputs, not the state (N20's states reach 64 MiB).
 * `end()` answers the outputs object (`{}` when the state has none or is not JSON).
 */
export class StateOutputsScanner {
  private readonly tree = new JsonValueBuilder();
  private failed = false;
  private readonly scanner = new JsonScanner(
    {
      stringAt: (path) => (path[0] === "outputs" ? "whole" : "skip"),
      open: (path, kind) => {
        if (path[0] === "outputs") this.tree.open(path, kind);
      },
      close: (path) => {
        if (path[0] === "outputs") this.tree.close();
      },
      scalar: (path, value) => {
        if (path[0] === "outputs") this.tree.attach(path, value);
      },
    },
    { maxString: 64 * 1024 * 1024, maxDepth: 256 },
  );

  write(text: string): void {
    if (this.failed) return;
    try {
      this.scanner.write(text);
    } catch (err) {
      if (!(err instanceof JsonScanError)) throw err;
      this.failed = true;
    }
  }

  end(): Record<string, unknown> {
    if (!this.failed) {
      try {
        this.scanner.end();
      } catch (err) {
        if (!(err instanceof JsonScanError)) throw err;
        this.failed = true;
      }
    }
    return !this.failed && isObject(this.tree.root) ? this.tree.root : {};
  }
}

/**
 * A JSON plan's summary read in pieces (N20: up to 64 MiB in bounded
 * memory): of each resource change only its address, mode, actions and whether it imports
 * are kept, of each output change whether it does anything; the values before and after
 * are scanned and dropped. Throws EngineDocumentError when it is not a JSON plan, and for
 * text that is not JSON.
 */
export class JsonPlanSummaryScanner {
  private topIsObject = false;
  /** false: absent; null: present but not an array. */
  private changesKind: "array" | "other" | null = null;
  private outputsAreObject = false;
  private outputChanged = false;
  private entry: {
    address?: unknown;
    mode?: unknown;
    changeIsObject: boolean;
    actions: unknown[] | null;
    importing: boolean;
  } | null = null;
  private entryValid = true;
  private readonly changes: { address: string; mode: unknown; actions: string[]; importing: boolean }[] = [];
  private readonly scanner = new JsonScanner(
    {
      stringAt: (path) => (this.wanted(path) ? "whole" : "skip"),
      open: (path, kind) => this.opened(path, kind),
      close: (path) => this.closed(path),
      scalar: (path, value, skipped) => this.value(path, skipped ? SKIPPED : value),
    },
    { maxString: 64 * 1024, maxDepth: 256 },
  );

  write(text: string): void {
    asEngineDocument(() => this.scanner.write(text));
  }

  end(): JsonPlanSummary {
    asEngineDocument(() => this.scanner.end());
    if (!this.topIsObject) throw new EngineDocumentError("a JSON plan is a JSON object");
    if (this.changesKind === "other") throw new EngineDocumentError("resource_changes must be an array");
    const out: JsonPlanSummary = {
      hasChanges: false,
      additions: 0,
      changes: 0,
      destructions: 0,
      imports: 0,
      resourceChanges: [],
      addresses: [],
    };
    for (const { address, mode, actions, importing } of this.changes) {
      if (actions.includes("create")) out.additions++;
      if (actions.includes("delete")) out.destructions++;
      if (actions.includes("update")) out.changes++;
      if (importing) out.imports++;
      out.resourceChanges.push({ address, actions });
      const managed = mode === undefined || mode === "managed";
      if (managed && !(actions.length === 1 && actions[0] === "delete")) out.addresses.push(address);
    }
    out.hasChanges = out.additions + out.changes + out.destructions + out.imports > 0 || this.outputChanged;
    out.addresses.sort();
    return out;
  }

  /** Strings kept whole: an entry's address and mode, its actions, output changes' actions. */
  private wanted(path: JsonPath): boolean {
    if (path[0] === "resource_changes" && this.changesKind === "array") {
      if (path.length === 3) return path[2] === "address" || path[2] === "mode";
      return path.length === 5 && path[2] === "change" && path[3] === "actions";
    }
    return path[0] === "output_changes" && path.length === 4 && path[2] === "actions";
  }

  private opened(path: JsonPath, kind: "object" | "array"): void {
    if (path.length === 0) {
      this.topIsObject = kind === "object";
      return;
    }
    if (path.length === 1 && path[0] === "resource_changes") this.changesKind = kind === "array" ? "array" : "other";
    else if (path.length === 1 && path[0] === "output_changes") this.outputsAreObject = kind === "object";
    else if (path[0] === "resource_changes" && this.changesKind === "array") {
      if (path.length === 2) {
        this.entry = { changeIsObject: false, actions: null, importing: false };
        this.entryValid = kind === "object";
      } else if (this.entry && path.length === 3 && path[2] === "change") this.entry.changeIsObject = kind === "object";
      else if (this.entry && path.length === 4 && path[2] === "change" && path[3] === "actions")
        this.entry.actions = kind === "array" ? [] : null;
      else if (this.entry && path.length === 4 && path[2] === "change" && path[3] === "importing")
        this.entry.importing = true;
      else if (this.entry && path.length === 3 && path[2] === "mode") this.entry.mode = SKIPPED;
      // An action that is an object or an array: not a string.
      else if (this.entry && path.length === 5 && path[2] === "change" && path[3] === "actions")
        this.entry.actions?.push(SKIPPED);
    } else if (path[0] === "output_changes" && path.length === 3 && path[2] === "actions" && kind === "array")
      this.outputActions = [];
    else if (path[0] === "output_changes" && path.length === 4 && path[2] === "actions")
      this.outputActions?.push(SKIPPED);
  }

  private outputActions: unknown[] | null = null;

  private closed(path: JsonPath): void {
    if (path[0] === "resource_changes" && this.changesKind === "array" && path.length === 2) this.endEntry();
    if (path[0] === "output_changes" && path.length === 3 && path[2] === "actions" && this.outputActions) {
      if (this.outputsAreObject && this.outputActions.some((a) => a !== "no-op")) this.outputChanged = true;
      this.outputActions = null;
    }
  }

  private value(path: JsonPath, value: JsonScalar | typeof SKIPPED): void {
    if (path.length === 1 && path[0] === "resource_changes") {
      // JSON.parse's plan.resource_changes ?? []: null is "none", anything else not an array.
      this.changesKind = value === null ? null : "other";
      return;
    }
    if (path[0] === "resource_changes" && this.changesKind === "array") {
      if (path.length === 2) {
        // A scalar entry.
        this.entry = { changeIsObject: false, actions: null, importing: false };
        this.entryValid = false;
        this.endEntry();
        return;
      }
      const entry = this.entry;
      if (!entry) return;
      if (path.length === 3 && path[2] === "address") entry.address = value;
      else if (path.length === 3 && path[2] === "mode") entry.mode = value;
      else if (path.length === 4 && path[2] === "change" && path[3] === "actions") entry.actions = null;
      else if (path.length === 4 && path[2] === "change" && path[3] === "importing") entry.importing = value !== null;
      else if (path.length === 5 && path[2] === "change" && path[3] === "actions") entry.actions?.push(value);
      return;
    }
    if (path[0] === "output_changes" && path.length === 4 && path[2] === "actions") this.outputActions?.push(value);
  }

  private endEntry(): void {
    const entry = this.entry;
    this.entry = null;
    if (!entry) return;
    if (!this.entryValid || typeof entry.address !== "string" || !entry.changeIsObject)
      throw new EngineDocumentError("each resource change needs an address and a change");
    const actions = entry.actions;
    if (!actions?.every((a) => typeof a === "string"))
      throw new EngineDocumentError(`resource change ${entry.address} has no actions`);
    this.changes.push({
      address: entry.address,
      mode: entry.mode,
      actions: actions as string[],
      importing: entry.importing,
    });
  }
}
