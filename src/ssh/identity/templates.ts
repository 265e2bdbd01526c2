/**
 * Vault's identity templates in "ACL templating" mode (Vault's ACL templating), used by CA
 * roles in `default_user`, `allowed_users`, `allowed_domains` and `default_extensions`
 * values when the matching `*_template` flag is on. Rendered from the entity of the
 * calling token (decision S5a).
 *
 * Pure: no Workers, D1 or Hono imports, so Node unit tests cover it directly.
 */

/** The parts of an identity entity a template can select. Structurally an `Entity`. */
export interface TemplateEntity {
  id: string;
  name: string;
  metadata: Record<string, string>;
  aliases: readonly {
    id: string;
    name: string;
    mountAccessor: string;
    metadata: Record<string, string>;
  }[];
  /**
   * The groups the entity is in, directly or through nesting (S27), for `identity.groups.*`
   * directives; absent or empty: none (Vault's "no groups were found").
   */
  groups?: readonly TemplateGroup[];
}

/** The parts of an identity group a template can select. */
export interface TemplateGroup {
  id: string;
  name: string;
  metadata: Record<string, string>;
}

/** A template that cannot be rendered; `message` is Vault's cause text. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

// sdk/helper/identitytpl error texts, verbatim.
const UNBALANCED = "unbalanced templating characters";
const NOT_FOUND = "no value could be found for one of the template directives";
const NO_ENTITY = "string contains entity template directives but no entity was found";
const NO_GROUPS = "string contains groups template directives but no groups were found";

/**
 * Vault's detection regex `{{.+?}}`: does the string hold a template directive? Written
 * with indexOf, as the unanchored lazy regex is quadratic on a long run of `{` (B9).
 */
export function containsTemplate(text: string): boolean {
  const open = text.indexOf("{{");
  return open >= 0 && text.indexOf("}}", open + 3) >= 0;
}

/**
 * Split a template into literal text and trimmed directives, checking that braces balance
 * (identitytpl.PopulateString).
 * @throws TemplateError `unbalanced templating characters`
 */
function parse(text: string): { literals: string[]; directives: string[] } {
  if (count(text, "{{") !== count(text, "}}")) throw new TemplateError(UNBALANCED);
  const pieces = text.split("{{");
  if (pieces[0]!.includes("}}")) throw new TemplateError(UNBALANCED);
  const literals = [pieces[0]!];
  const directives: string[] = [];
  for (const piece of pieces.slice(1)) {
    const parts = piece.split("}}");
    if (parts.length !== 2) throw new TemplateError(UNBALANCED);
    directives.push(parts[0]!.trim());
    literals.push(parts[1]!);
  }
  return { literals, directives };
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** A value that must be a non-empty string in ACL mode. */
function present(value: string | undefined): string {
  if (value === undefined || value === "") throw new TemplateError(NOT_FOUND);
  return value;
}

function renderAlias(selector: string, alias: TemplateEntity["aliases"][number]): string {
  if (selector === "id") return present(alias.id);
  if (selector === "name") return present(alias.name);
  // Our alias model keeps one metadata map (written as custom_metadata): both selectors read it.
  for (const prefix of ["metadata.", "custom_metadata."]) {
    if (selector.startsWith(prefix)) return present(own(alias.metadata, selector.slice(prefix.length)));
  }
  throw new TemplateError(NOT_FOUND);
}

function own(map: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

function renderEntity(selector: string, entity: TemplateEntity): string {
  if (selector === "id") return present(entity.id);
  if (selector === "name") return present(entity.name);
  if (selector.startsWith("metadata.")) return present(own(entity.metadata, selector.slice("metadata.".length)));
  if (selector.startsWith("aliases.")) {
    const rest = selector.slice("aliases.".length);
    const dot = rest.indexOf(".");
    if (dot === -1) throw new TemplateError("invalid alias selector");
    const accessor = rest.slice(0, dot);
    const alias = entity.aliases.find((a) => a.mountAccessor === accessor);
    if (!alias) throw new TemplateError("alias not found");
    return renderAlias(rest.slice(dot + 1), alias);
  }
  // `metadata`, `groups.names`, `groups.ids` are list/map values: errors in ACL mode.
  throw new TemplateError(NOT_FOUND);
}

/**
 * `identity.groups.ids.<id>.<field>` and `identity.groups.names.<name>.<field>`, fields
 * `id`, `name`, `metadata.<key>` (sdk/helper/identitytpl, performGroupsTemplating).
 */
function renderGroups(selector: string, groups: readonly TemplateGroup[]): string {
  const dot = selector.indexOf(".");
  const kind = dot === -1 ? "" : selector.slice(0, dot);
  if (kind !== "ids" && kind !== "names") throw new TemplateError("invalid groups selector");
  const rest = selector.slice(dot + 1);
  const next = rest.indexOf(".");
  if (next === -1) throw new TemplateError("invalid groups accessor");
  const key = rest.slice(0, next);
  const group = groups.find((g) => (kind === "ids" ? g.id : g.name) === key);
  // Go's %q quoting of a plain name is JSON's.
  if (!group) throw new TemplateError(`entity is not a member of group ${JSON.stringify(key)}`);
  const field = rest.slice(next + 1);
  if (field === "id") return group.id;
  if (field === "name") return present(group.name);
  if (field.startsWith("metadata.")) {
    const value = own(group.metadata, field.slice("metadata.".length));
    if (value === undefined) throw new TemplateError(NOT_FOUND);
    return value;
  }
  throw new TemplateError(NOT_FOUND);
}

/** Does the text hold an `identity.groups.*` directive (so the caller's groups must be loaded)? */
export function usesGroupTemplates(text: string): boolean {
  return containsTemplate(text) && text.includes("identity.groups.");
}

/** parseutil.ParseDurationSecond for the `time.now.plus.<d>` operand, in seconds. */
function parseOperand(text: string): number {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  if (/^\d+d$/.test(t)) return Number(t.slice(0, -1)) * 86400;
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * units[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (t === "" || consumed !== t.length) throw new TemplateError(`invalid duration: time: invalid duration "${t}"`);
  return Math.trunc(total);
}

function renderTime(selector: string, now: number): string {
  const parts = selector.split(".");
  const [head, op, ...operand] = parts;
  if (head !== "now") throw new TemplateError(`invalid time selector "${head}"`);
  const nowSeconds = Math.floor(now / 1000);
  if (parts.length === 1) return String(nowSeconds);
  if (parts.length === 2) throw new TemplateError("missing time operand");
  const delta = parseOperand(operand.join("."));
  if (op === "plus") return String(nowSeconds + delta);
  if (op === "minus") return String(nowSeconds - delta);
  throw new TemplateError(`invalid time operator "${op}"`);
}

function renderDirective(directive: string, entity: TemplateEntity | null, now: number): string {
  if (directive.startsWith("identity.entity.")) {
    if (!entity) throw new TemplateError(NO_ENTITY);
    return renderEntity(directive.slice("identity.entity.".length), entity);
  }
  if (directive.startsWith("identity.groups.")) {
    if (!entity?.groups || entity.groups.length === 0) throw new TemplateError(NO_GROUPS);
    return renderGroups(directive.slice("identity.groups.".length), entity.groups);
  }
  if (directive.startsWith("time.")) return renderTime(directive.slice("time.".length), now);
  throw new TemplateError(NOT_FOUND);
}

/**
 * Render every `{{ … }}` directive of `text` from `entity` (Vault's ACL templating). Text around
 * directives is kept; whitespace inside the braces is ignored.
 * @throws TemplateError with Vault's cause text
 */
export function renderTemplate(text: string, entity: TemplateEntity | null, now: number = Date.now()): string {
  const { literals, directives } = parse(text);
  let out = literals[0]!;
  directives.forEach((directive, i) => {
    out += renderDirective(directive, entity, now) + literals[i + 1]!;
  });
  return out;
}

/** Directive forms a template may use (checked when a role is written). */
const KNOWN_DIRECTIVE =
  /^(identity\.entity\.(id|name|metadata\.[^\s]+|aliases\.[^.\s]+\.(id|name|(custom_)?metadata\.[^\s]+))|identity\.groups\.(ids|names)\.[^.\s]+\.(id|name|metadata\.[^\s]+)|time\.now(\.(plus|minus)\.[0-9][0-9a-z.]*)?)$/;

/**
 * Check a template's syntax without rendering it: balanced braces and directives of a form
 * Vault can render. Returns the cause text of the first problem, or null.
 */
export function templateSyntaxError(text: string): string | null {
  let directives: string[];
  try {
    ({ directives } = parse(text));
  } catch (e) {
    return (e as Error).message;
  }
  for (const directive of directives) {
    if (!KNOWN_DIRECTIVE.test(directive)) return `unknown template directive "${directive}"`;
  }
  return null;
}

/** Vault's wrapping of a render failure: `template '<tpl>' could not be rendered -> <cause>`. */
export function renderFailure(template: string, cause: string): string {
  return `template '${template}' could not be rendered -> ${cause}`;
}
