/**
 * What a person reviews in an engine's JSON plan (decision N19: "the plan page and the console
 * show the real resource changes (address, actions, which attributes change, sensitive ones
 * masked) and output changes"), read from Terraform's JSON Output Format 1.x
 * (https://developer.hashicorp.com/terraform/internals/json-format): each entry of
 * `resource_changes[]` with its `change.{actions, before, after, after_unknown,
 * before_sensitive, after_sensitive, replace_paths}` and `action_reason`, and each entry of
 * `output_changes`.
 *
 * Guarantees, whatever the document holds:
 * - a value under a sensitive mark (`before_sensitive` or `after_sensitive`, on either side)
 *   is never in the result, before or after: both sides of that attribute read
 *   `(sensitive value)`. As a second line of defence, every string found under a sensitive
 *   mark, in a sensitive output or in a variable the configuration declares `sensitive`, is
 *   masked wherever else it appears (an engine does not always carry marks through, e.g.
 *   `terraform_data`'s `output` before the change);
 * - a value marked in `after_unknown` reads `(known after apply)`;
 * - the result is bounded ({@link PLAN_VIEW_LIMITS}): at most so many resources, attributes per
 *   resource and outputs are described, the rest are counted; values are cut to a length;
 *   nesting deeper than a limit is summarised. The caller bounds the document's size.
 *
 * Pure: no I/O; the plan page (src/nocode/plan-page) reads the stored JSON plan and renders this.
 */

/** How a resource or output changes (Terraform's `actions`, a replacement as one word). */
export type ChangeAction = "create" | "update" | "delete" | "replace" | "read" | "no-op" | "forget";

/** One side of a changed attribute or output, as it may be shown. */
export type ShownPlanValue =
  /** null or not set on that side. */
  | { kind: "absent" }
  /** A value (JSON-like text, cut to {@link PLAN_VIEW_LIMITS}.valueChars). */
  | { kind: "value"; text: string }
  /** Sensitive: never shown. */
  | { kind: "sensitive" }
  /** Only known after apply. */
  | { kind: "unknown" };

/** An attribute whose value changes, at a nested path (`input.tags.tier`, `triggers_replace[0]`). */
export interface AttributeChange {
  path: string;
  before: ShownPlanValue;
  after: ShownPlanValue;
  /** The change of this attribute forces the resource to be replaced (`replace_paths`). */
  forcesReplacement: boolean;
}

/** A resource whose plan is not a no-op. */
export interface ResourceChangeView {
  address: string;
  action: ChangeAction;
  /** Terraform's `action_reason` in words (`replace because cannot update`), if any. */
  reason?: string;
  /** True when the resource is imported by this plan (`change.importing`). */
  importing: boolean;
  /** The attributes that change; none for a destruction or a read. */
  attributes: AttributeChange[];
  /** Attributes that change beyond those listed. */
  omittedAttributes: number;
}

/** An output whose plan is not a no-op. */
export interface OutputChangeView {
  name: string;
  action: ChangeAction;
  before: ShownPlanValue;
  after: ShownPlanValue;
}

/** Everything the pages show of a JSON plan. */
export interface PlanChanges {
  resources: ResourceChangeView[];
  /** Changed resources beyond those listed. */
  omittedResources: number;
  /** Addresses of resources that do not change (at most {@link PLAN_VIEW_LIMITS}.resources). */
  unchanged: string[];
  /** Unchanged resources beyond those listed. */
  omittedUnchanged: number;
  outputs: OutputChangeView[];
  /** Changed outputs beyond those listed. */
  omittedOutputs: number;
  /** Outputs that do not change. */
  unchangedOutputs: number;
}

/** The bounds of a {@link PlanChanges}. */
export const PLAN_VIEW_LIMITS = {
  resources: 100,
  attributesPerResource: 50,
  outputs: 50,
  /** Characters of one shown value. */
  valueChars: 200,
  /** Nesting walked into; deeper values are summarised. */
  depth: 24,
  /** Sensitive strings remembered for the second line of defence. */
  sensitiveStrings: 1000,
} as const;

/** Why a JSON plan could not be read. */
export class PlanChangesError extends Error {}

type Json = unknown;
type Segment = string | number;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isAbsent = (value: unknown) => value === null || value === undefined;

/** Terraform's `actions` list as one action; null when it is not one Terraform writes. */
export function changeAction(actions: readonly unknown[]): ChangeAction | null {
  const key = actions.join(",");
  switch (key) {
    case "create":
    case "update":
    case "delete":
    case "read":
    case "no-op":
    case "forget":
      return key;
    case "delete,create":
    case "create,delete":
      return "replace";
    default:
      return null;
  }
}

/** A sensitivity or unknown mark at a child: `true` marks the whole subtree. */
function child(mark: unknown, key: Segment): unknown {
  if (mark === true) return true;
  if (Array.isArray(mark) && typeof key === "number") return mark[key];
  if (isObject(mark) && typeof key === "string") return mark[key];
  return undefined;
}

/** True when the mark or anything beneath it is set. */
function anyMarked(mark: unknown, depth = 0): boolean {
  if (mark === true) return true;
  if (depth > PLAN_VIEW_LIMITS.depth) return false;
  if (Array.isArray(mark)) return mark.some((m) => anyMarked(m, depth + 1));
  if (isObject(mark)) return Object.values(mark).some((m) => anyMarked(m, depth + 1));
  return false;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/** `input.tags["a b"]`, `triggers_replace[0]`. */
function pathText(segments: readonly Segment[]): string {
  let out = "";
  for (const s of segments) {
    if (typeof s === "number") out += `[${s}]`;
    else if (IDENTIFIER.test(s)) out += out ? `.${s}` : s;
    else out += `[${JSON.stringify(s)}]`;
  }
  return out;
}

function deepEqual(a: Json, b: Json, depth = 0): boolean {
  if (a === b) return true;
  if (depth > PLAN_VIEW_LIMITS.depth) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i], depth + 1));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], b[k], depth + 1));
  }
  return false;
}

/** Strings that must never be shown, wherever they appear (the second line of defence). */
class SensitiveStrings {
  private readonly values = new Set<string>();

  /** Remember every string of `value` (a value known to be sensitive). */
  add(value: Json, depth = 0): void {
    if (this.values.size >= PLAN_VIEW_LIMITS.sensitiveStrings || depth > PLAN_VIEW_LIMITS.depth) return;
    if (typeof value === "string") {
      if (value !== "") this.values.add(value);
    } else if (Array.isArray(value)) for (const v of value) this.add(v, depth + 1);
    else if (isObject(value)) for (const v of Object.values(value)) this.add(v, depth + 1);
  }

  /** Remember the strings of `value` under the marks of `mark`. */
  addMarked(value: Json, mark: unknown, depth = 0): void {
    if (mark === true) {
      this.add(value, depth);
      return;
    }
    if (depth > PLAN_VIEW_LIMITS.depth) return;
    if (Array.isArray(value)) for (const [i, v] of value.entries()) this.addMarked(v, child(mark, i), depth + 1);
    else if (isObject(value)) for (const [k, v] of Object.entries(value)) this.addMarked(v, child(mark, k), depth + 1);
  }

  /** True when `text` is, or (for secrets of 4 characters or more) contains, a sensitive string. */
  reveals(text: string): boolean {
    if (this.values.has(text)) return true;
    for (const secret of this.values) if (secret.length >= 4 && text.includes(secret)) return true;
    return false;
  }
}

const SENSITIVE: ShownPlanValue = { kind: "sensitive" };
const UNKNOWN: ShownPlanValue = { kind: "unknown" };
const ABSENT: ShownPlanValue = { kind: "absent" };

/**
 * Compact text of a value with its sensitive parts as `(sensitive value)` and unknown parts as
 * `(known after apply)`, cut to the length limit.
 */
function valueText(value: Json, sensitive: unknown, unknown: unknown, secrets: SensitiveStrings): ShownPlanValue {
  if (sensitive === true) return SENSITIVE;
  if (unknown === true) return UNKNOWN;
  if (isAbsent(value)) return ABSENT;
  const budget = { left: PLAN_VIEW_LIMITS.valueChars + 1 };
  const parts: string[] = [];
  let masked = false;
  const write = (text: string) => {
    if (budget.left <= 0) return;
    parts.push(text.slice(0, budget.left));
    budget.left -= text.length;
  };
  const walk = (v: Json, s: unknown, u: unknown, depth: number): void => {
    if (budget.left <= 0) return;
    if (s === true) {
      write("(sensitive value)");
      return;
    }
    if (u === true) {
      write("(known after apply)");
      return;
    }
    if (depth > PLAN_VIEW_LIMITS.depth) {
      write("…");
      return;
    }
    if (typeof v === "string") {
      if (secrets.reveals(v)) {
        masked = true;
        write("(sensitive value)");
        return;
      }
      write(JSON.stringify(v));
      return;
    }
    if (Array.isArray(v)) {
      write("[");
      v.forEach((item, i) => {
        if (i > 0) write(", ");
        walk(item, child(s, i), child(u, i), depth + 1);
      });
      write("]");
      return;
    }
    if (isObject(v)) {
      write("{");
      Object.keys(v)
        .sort()
        .forEach((k, i) => {
          if (i > 0) write(", ");
          write(`${IDENTIFIER.test(k) ? k : JSON.stringify(k)} = `);
          walk(v[k], child(s, k), child(u, k), depth + 1);
        });
      write("}");
      return;
    }
    write(JSON.stringify(v) ?? "null");
  };
  walk(value, sensitive, unknown, 0);
  // A whole value that is only a sensitive string reads as the mask, not as a quoted text.
  if (masked && typeof value === "string") return SENSITIVE;
  let text = parts.join("");
  if (text.length > PLAN_VIEW_LIMITS.valueChars) text = `${text.slice(0, PLAN_VIEW_LIMITS.valueChars - 1)}…`;
  return { kind: "value", text };
}

/** A masked side: absent or unknown tell nothing, anything else is the mask. */
function maskedSide(value: Json, unknown: unknown): ShownPlanValue {
  if (unknown === true) return UNKNOWN;
  return isAbsent(value) ? ABSENT : SENSITIVE;
}

/** The walk of one resource's change: collects attribute changes, counts the rest. */
class AttributeDiff {
  readonly attributes: AttributeChange[] = [];
  omitted = 0;

  constructor(
    private readonly secrets: SensitiveStrings,
    private readonly replacePaths: readonly (readonly Segment[])[],
  ) {}

  private forcesReplacement(path: readonly Segment[]): boolean {
    return this.replacePaths.some(
      (p) => p.length > 0 && p.length <= path.length && p.every((segment, i) => segment === path[i]),
    );
  }

  private push(
    path: readonly Segment[],
    before: Json,
    after: Json,
    marks: { bs: unknown; as: unknown; au: unknown },
  ): void {
    if (this.attributes.length >= PLAN_VIEW_LIMITS.attributesPerResource) {
      this.omitted++;
      return;
    }
    // N19: a sensitive mark on either side masks both sides; marks deeper inside mask those
    // parts, and the strings they hold are masked wherever else they appear.
    const hidden = marks.bs === true || marks.as === true;
    this.attributes.push({
      path: pathText(path),
      before: hidden ? maskedSide(before, undefined) : valueText(before, marks.bs, undefined, this.secrets),
      after: hidden ? maskedSide(after, marks.au) : valueText(after, marks.as, marks.au, this.secrets),
      forcesReplacement: this.forcesReplacement(path),
    });
  }

  /** Compare `before` and `after` at `path` with their marks. */
  walk(path: Segment[], before: Json, after: Json, bs: unknown, as: unknown, au: unknown): void {
    const sensitive = bs === true || as === true;
    if (au === true) {
      // Unknown after apply: a change unless nothing was there and nothing is known to come.
      this.push(path, before, after, { bs, as, au });
      return;
    }
    if (sensitive) {
      if (!deepEqual(before, after)) this.push(path, before, after, { bs, as, au });
      return;
    }
    const bothObjects = (isObject(before) || isAbsent(before)) && (isObject(after) || isAbsent(after));
    const bothArrays = (Array.isArray(before) || isAbsent(before)) && (Array.isArray(after) || isAbsent(after));
    const container = isObject(before) || isObject(after) || Array.isArray(before) || Array.isArray(after);
    if (container && path.length >= PLAN_VIEW_LIMITS.depth) {
      if (!deepEqual(before, after)) this.push(path, before, after, { bs, as, au });
      return;
    }
    if (container && bothObjects) {
      const b = isObject(before) ? before : {};
      const a = isObject(after) ? after : {};
      const keys = new Set([...Object.keys(b), ...Object.keys(a), ...(isObject(au) ? Object.keys(au) : [])]);
      for (const key of [...keys].sort()) {
        path.push(key);
        this.walk(path, b[key], a[key], child(bs, key), child(as, key), child(au, key));
        path.pop();
      }
      return;
    }
    if (container && bothArrays) {
      const b = Array.isArray(before) ? before : [];
      const a = Array.isArray(after) ? after : [];
      const length = Math.max(b.length, a.length, Array.isArray(au) ? au.length : 0);
      for (let i = 0; i < length; i++) {
        path.push(i);
        this.walk(path, b[i], a[i], child(bs, i), child(as, i), child(au, i));
        path.pop();
      }
      return;
    }
    if (isAbsent(before) && isAbsent(after)) return;
    if (!deepEqual(before, after)) this.push(path, before, after, { bs, as, au });
  }
}

/** `replace_because_cannot_update` → `replace because cannot update`. */
function reasonText(reason: unknown): string | undefined {
  return typeof reason === "string" && /^[a-z_]{1,80}$/.test(reason) ? reason.replaceAll("_", " ") : undefined;
}

function replacePathsOf(change: Record<string, unknown>): Segment[][] {
  if (!Array.isArray(change.replace_paths)) return [];
  return change.replace_paths
    .filter((p): p is unknown[] => Array.isArray(p))
    .map((p) => p.filter((s): s is Segment => typeof s === "string" || typeof s === "number"));
}

/** Every string the plan marks sensitive, or holds in a variable declared `sensitive`. */
function sensitiveStringsOf(plan: Record<string, unknown>, changes: unknown[]): SensitiveStrings {
  const secrets = new SensitiveStrings();
  for (const entry of changes) {
    if (!isObject(entry) || !isObject(entry.change)) continue;
    const c = entry.change;
    secrets.addMarked(c.before, c.before_sensitive);
    secrets.addMarked(c.after, c.after_sensitive);
  }
  if (isObject(plan.output_changes)) {
    for (const o of Object.values(plan.output_changes)) {
      if (!isObject(o)) continue;
      secrets.addMarked(o.before, o.before_sensitive);
      secrets.addMarked(o.after, o.after_sensitive);
    }
  }
  const configuration = isObject(plan.configuration) ? plan.configuration : {};
  const rootModule = isObject(configuration.root_module) ? configuration.root_module : {};
  const declared = isObject(rootModule.variables) ? rootModule.variables : {};
  const values = isObject(plan.variables) ? plan.variables : {};
  for (const [name, declaration] of Object.entries(declared)) {
    const value = values[name];
    if (isObject(declaration) && declaration.sensitive === true && isObject(value)) secrets.add(value.value);
  }
  return secrets;
}

/**
 * The changes a person reviews in a parsed JSON plan; throws PlanChangesError when it is not
 * one.
 *
 * @example
 * const changes = describePlanChanges(JSON.parse(text));
 */
export function describePlanChanges(plan: unknown): PlanChanges {
  if (!isObject(plan)) throw new PlanChangesError("a JSON plan is a JSON object");
  const changes = plan.resource_changes ?? [];
  if (!Array.isArray(changes)) throw new PlanChangesError("resource_changes must be an array");
  const secrets = sensitiveStringsOf(plan, changes);
  const out: PlanChanges = {
    resources: [],
    omittedResources: 0,
    unchanged: [],
    omittedUnchanged: 0,
    outputs: [],
    omittedOutputs: 0,
    unchangedOutputs: 0,
  };
  for (const entry of changes) {
    if (!isObject(entry) || typeof entry.address !== "string" || !isObject(entry.change))
      throw new PlanChangesError("each resource change needs an address and a change");
    const c = entry.change;
    const action = Array.isArray(c.actions) ? changeAction(c.actions) : null;
    if (action === null) throw new PlanChangesError(`resource change ${entry.address} has no known actions`);
    const importing = isObject(c.importing);
    if (action === "no-op" && !importing) {
      if (out.unchanged.length < PLAN_VIEW_LIMITS.resources) out.unchanged.push(entry.address);
      else out.omittedUnchanged++;
      continue;
    }
    if (out.resources.length >= PLAN_VIEW_LIMITS.resources) {
      out.omittedResources++;
      continue;
    }
    const diff = new AttributeDiff(secrets, replacePathsOf(c));
    // A destruction removes every attribute and a read only fetches: neither lists attributes.
    if (action !== "delete" && action !== "read" && action !== "forget") {
      const before = action === "create" ? null : c.before;
      diff.walk([], before, c.after, c.before_sensitive, c.after_sensitive, c.after_unknown);
    }
    const view: ResourceChangeView = {
      address: entry.address,
      action,
      importing,
      attributes: diff.attributes,
      omittedAttributes: diff.omitted,
    };
    const reason = reasonText(entry.action_reason);
    if (reason) view.reason = reason;
    out.resources.push(view);
  }
  const outputs = isObject(plan.output_changes) ? plan.output_changes : {};
  for (const name of Object.keys(outputs).sort()) {
    const o = outputs[name];
    if (!isObject(o)) continue;
    const action = Array.isArray(o.actions) ? changeAction(o.actions) : null;
    if (action === null || action === "no-op") {
      out.unchangedOutputs++;
      continue;
    }
    if (out.outputs.length >= PLAN_VIEW_LIMITS.outputs) {
      out.omittedOutputs++;
      continue;
    }
    const hidden = anyMarked(o.before_sensitive) || anyMarked(o.after_sensitive);
    out.outputs.push({
      name,
      action,
      before: hidden ? maskedSide(o.before, undefined) : valueText(o.before, undefined, undefined, secrets),
      after: hidden ? maskedSide(o.after, o.after_unknown) : valueText(o.after, undefined, o.after_unknown, secrets),
    });
  }
  return out;
}
