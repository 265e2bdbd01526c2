/**
 * ACL policies in Vault's JSON syntax and Vault's matching rules (decision S5a).
 * Pure: parsing, merging and evaluation take no I/O.
 *
 * A policy is `{"path": {"<pattern>": {"capabilities": [...]}}}`. Patterns are exact, or
 * contain `+` (exactly one path segment) and/or end with `*` (any suffix). For a request
 * path an exact pattern wins; otherwise the highest-priority matching pattern decides, by
 * Vault's documented order. Capabilities granted to one pattern by several policies are
 * merged, and `deny` there wins over everything else.
 */

export const CAPABILITIES = ["create", "read", "update", "patch", "delete", "list", "sudo", "deny"] as const;
export type Capability = (typeof CAPABILITIES)[number];

/** One policy, normalised: pattern → capabilities. */
export type PolicyRules = Record<string, Capability[]>;

export class PolicyParseError extends Error {}

/** Parse the text of a policy (JSON syntax). Throws PolicyParseError with a clear reason. */
export function parsePolicy(text: string): PolicyRules {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new PolicyParseError(
      'failed to parse policy: only Vault\'s JSON policy syntax is supported, e.g. {"path":{"ssh/sign/*":{"capabilities":["create","update"]}}}',
    );
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    throw new PolicyParseError("failed to parse policy: the policy must be a JSON object");
  }
  const top = doc as Record<string, unknown>;
  for (const key of Object.keys(top)) {
    if (key !== "path") throw new PolicyParseError(`failed to parse policy: invalid key "${key}"`);
  }
  const paths = top.path;
  if (paths === undefined) return {};
  if (paths === null || typeof paths !== "object" || Array.isArray(paths)) {
    throw new PolicyParseError('failed to parse policy: "path" must be an object of path patterns');
  }
  const rules: PolicyRules = {};
  for (const [rawPattern, body] of Object.entries(paths as Record<string, unknown>)) {
    const pattern = rawPattern.replace(/^\/+/, "");
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      throw new PolicyParseError(`failed to parse policy: path "${rawPattern}": rules must be an object`);
    }
    for (const key of Object.keys(body as object)) {
      if (key !== "capabilities") {
        throw new PolicyParseError(`failed to parse policy: path "${rawPattern}": invalid key "${key}"`);
      }
    }
    const caps = (body as { capabilities?: unknown }).capabilities;
    if (!Array.isArray(caps)) {
      throw new PolicyParseError(`failed to parse policy: path "${rawPattern}": "capabilities" must be a list`);
    }
    const set = new Set<Capability>(rules[pattern] ?? []);
    for (const cap of caps) {
      if (typeof cap !== "string" || !(CAPABILITIES as readonly string[]).includes(cap)) {
        throw new PolicyParseError(
          `failed to parse policy: path "${rawPattern}": invalid capability ${JSON.stringify(cap)}`,
        );
      }
      set.add(cap as Capability);
    }
    rules[pattern] = [...set].sort();
  }
  return rules;
}

/** Vault's built-in `default` policy (the rules that matter for this service). */
export const DEFAULT_POLICY_TEXT = JSON.stringify(
  {
    path: {
      "auth/token/lookup-self": { capabilities: ["read"] },
      "auth/token/renew-self": { capabilities: ["update"] },
      "auth/token/revoke-self": { capabilities: ["update"] },
      "sys/capabilities-self": { capabilities: ["update"] },
      "sys/leases/lookup": { capabilities: ["update"] },
      "sys/leases/renew": { capabilities: ["update"] },
      "sys/renew": { capabilities: ["update"] },
    },
  },
  null,
  2,
);

interface CompiledPattern {
  pattern: string;
  caps: Set<Capability>;
  regex: RegExp;
  /** Index of the first `+` or `*`. */
  firstWildcard: number;
  endsWithGlob: boolean;
  plusCount: number;
}

/** Several policies merged for one token, ready to answer capability questions. */
export class Acl {
  private readonly exact = new Map<string, Set<Capability>>();
  private readonly patterns: CompiledPattern[] = [];

  constructor(policies: PolicyRules[]) {
    const merged = new Map<string, Set<Capability>>();
    for (const rules of policies) {
      for (const [pattern, caps] of Object.entries(rules)) {
        const set = merged.get(pattern) ?? new Set<Capability>();
        for (const cap of caps) set.add(cap);
        merged.set(pattern, set);
      }
    }
    for (const [pattern, caps] of merged) {
      // Deny on a pattern wins over every other capability granted to it.
      const effective = caps.has("deny") ? new Set<Capability>(["deny"]) : caps;
      if (!pattern.includes("+") && !pattern.endsWith("*")) {
        this.exact.set(pattern, effective);
        continue;
      }
      const plus = pattern.indexOf("+");
      const star = pattern.endsWith("*") ? pattern.length - 1 : -1;
      this.patterns.push({
        pattern,
        caps: effective,
        regex: compilePattern(pattern),
        firstWildcard: Math.min(
          plus === -1 ? Number.POSITIVE_INFINITY : plus,
          star === -1 ? Number.POSITIVE_INFINITY : star,
        ),
        endsWithGlob: pattern.endsWith("*"),
        plusCount: pattern.split("/").filter((s) => s === "+").length,
      });
    }
    // Highest priority first (Vault's documented ordering, applied in reverse).
    this.patterns.sort((a, b) => -comparePriority(a, b));
  }

  /** The capabilities that apply to `path` (empty when nothing matches). */
  capabilities(path: string): Set<Capability> {
    const exact = this.exact.get(path);
    if (exact) return exact;
    for (const p of this.patterns) if (p.regex.test(path)) return p.caps;
    return new Set();
  }

  /** True when `path` grants `capability` and is not denied. */
  allows(path: string, capability: Capability): boolean {
    const caps = this.capabilities(path);
    return !caps.has("deny") && caps.has(capability);
  }
}

function compilePattern(pattern: string): RegExp {
  const glob = pattern.endsWith("*");
  const body = glob ? pattern.slice(0, -1) : pattern;
  const segments = body
    .split("/")
    .map((segment) => (segment === "+" ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  // lint-regex: escaped literals and `[^/]+` segments separated by `/`, at most one trailing `.*`, anchored: linear.
  return new RegExp(`^${segments.join("/")}${glob ? ".*" : ""}$`, "s");
}

/**
 * Vault's priority rules, returning <0 when `a` has lower priority than `b`:
 * 1. the first `+` or `*` occurring earlier → lower; 2. ending in `*` when the other does
 * not → lower; 3. more `+` segments → lower; 4. shorter → lower; 5. lexicographically
 * smaller → lower.
 */
function comparePriority(a: CompiledPattern, b: CompiledPattern): number {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard < b.firstWildcard ? -1 : 1;
  if (a.endsWithGlob !== b.endsWithGlob) return a.endsWithGlob ? -1 : 1;
  if (a.plusCount !== b.plusCount) return a.plusCount > b.plusCount ? -1 : 1;
  if (a.pattern.length !== b.pattern.length) return a.pattern.length < b.pattern.length ? -1 : 1;
  return a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0;
}
