/**
 * Input coercion as Vault's framework does it (Vault's sdk/framework/field_data.go): every supplied field is
 * converted to its declared type before the handler runs; a failure is 400
 * `Field validation failed: error converting input <v> for field "<name>": <cause>`.
 * Unknown fields are ignored and reported as a warning.
 */
import { badRequest } from "./errors";

export type FieldType =
  | "string"
  | "bool"
  | "int"
  /** Seconds: integer, numeric string, Go duration (`1h30m`) or days (`2d`). */
  | "duration"
  /** map<string,string>: an object, or an array of objects merged (historical form). */
  | "map"
  /** A JSON array or a comma-separated string, elements trimmed, empties dropped. */
  | "commaList"
  /** Any JSON value, validated by the handler. */
  | "raw";

export interface FieldSpec {
  type: FieldType;
  default?: unknown;
}

export type FieldSchema = Record<string, FieldSpec>;

export interface ParsedFields {
  /** Converted values, defaults filled in for absent fields. */
  values: Record<string, unknown>;
  /** Names of fields the caller actually sent. */
  provided: Set<string>;
  /** Sent fields the endpoint does not know, sorted. */
  unknown: string[];
}

/**
 * Go's `%v` rendering of a JSON value, as Vault prints inputs and map values. Iterative
 * (an explicit stack, no recursion), so a deeply nested input cannot overflow the call
 * stack while an error message about it is built (B9).
 */
export function goFormat(value: unknown): string {
  const out: string[] = [];
  // Pending work, last first: a value to render, or literal text to emit.
  const stack: ({ value: unknown } | string)[] = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item === "string") {
      out.push(item);
      continue;
    }
    const v = item.value;
    if (v === null || v === undefined) out.push("<nil>");
    else if (typeof v === "string") out.push(v);
    else if (typeof v === "number" || typeof v === "boolean") out.push(String(v));
    else if (Array.isArray(v)) {
      stack.push("]");
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] });
        if (i > 0) stack.push(" ");
      }
      stack.push("[");
    } else {
      const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      stack.push("]");
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, entry] = entries[i]!;
        stack.push({ value: entry });
        stack.push(`${k}:`);
        if (i > 0) stack.push(" ");
      }
      stack.push("map[");
    }
  }
  return out.join("");
}

class ConversionError extends Error {}

/** strconv.ParseBool's accepted spellings (decision S2 uses it for list flags too). */
export function parseGoBool(text: string): boolean | undefined {
  switch (text) {
    case "1":
    case "t":
    case "T":
    case "true":
    case "TRUE":
    case "True":
      return true;
    case "0":
    case "f":
    case "F":
    case "false":
    case "FALSE":
    case "False":
      return false;
    default:
      return undefined;
  }
}

const GO_UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};

/**
 * Parse a Go `time.ParseDuration` string into seconds (fractional). Throws
 * ConversionError with Go's message on failure.
 */
export function parseGoDuration(text: string): number {
  const invalid = () => new ConversionError(`time: invalid duration "${text}"`);
  let s = text;
  let sign = 1;
  if (s.startsWith("-") || s.startsWith("+")) {
    if (s[0] === "-") sign = -1;
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw invalid();
  let total = 0;
  // `\d+(?:\.\d*)?`, not `\d+\.?\d*`: the latter splits a run of digits many ways (B9).
  const re = /^(\d+(?:\.\d*)?|\.\d+)([a-zµμ]+)/;
  while (s.length > 0) {
    const m = re.exec(s);
    if (!m) {
      if (/^(\d+(?:\.\d*)?|\.\d+)$/.test(s)) throw new ConversionError(`time: missing unit in duration "${text}"`);
      throw invalid();
    }
    const unit = GO_UNITS[m[2]!];
    if (unit === undefined) throw new ConversionError(`time: unknown unit "${m[2]}" in duration "${text}"`);
    total += Number(m[1]) * unit;
    s = s.slice(m[0].length);
  }
  return sign * total;
}

/** Vault's parseutil.ParseDurationSecond: ints, numeric strings, Go durations, `d` days. */
export function parseDurationSeconds(value: unknown): number {
  let seconds: number;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new ConversionError(`invalid duration ${value}`);
    seconds = Math.trunc(value);
  } else if (typeof value === "string") {
    const text = value.trim();
    if (text === "") return 0;
    if (/^[-+]?\d+$/.test(text)) seconds = Number.parseInt(text, 10);
    else if (/^[-+]?\d+(\.\d+)?d$/.test(text)) seconds = Math.trunc(Number(text.slice(0, -1)) * 86400);
    else seconds = Math.trunc(parseGoDuration(text));
  } else if (value === null || value === undefined) {
    return 0;
  } else {
    throw new ConversionError(`could not parse duration from input`);
  }
  if (seconds < 0) throw new ConversionError(`cannot provide negative value '${seconds}'`);
  if (seconds > Number.MAX_SAFE_INTEGER / 1000) throw new ConversionError("duration is too large");
  return seconds;
}

function toStringField(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  // mapstructure's weak decoding turns booleans into "1"/"0"
  if (typeof value === "boolean") return value ? "1" : "0";
  if (value === null) return "";
  throw new ConversionError(`'' expected type 'string', got unconvertible type '${jsonKind(value)}'`);
}

function toBoolField(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value !== 0;
  if (value === null) return false;
  if (typeof value === "string") {
    if (value === "") return false;
    const b = parseGoBool(value);
    if (b === undefined) throw new ConversionError(`strconv.ParseBool: parsing "${value}": invalid syntax`);
    return b;
  }
  throw new ConversionError(`'' expected type 'bool', got unconvertible type '${jsonKind(value)}'`);
}

function toIntField(value: unknown): number {
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new ConversionError(`cannot parse '' as int: value ${value} is not an integer`);
    return value;
  }
  if (typeof value === "string") {
    if (value === "") return 0;
    if (!/^[-+]?\d+$/.test(value.trim()))
      throw new ConversionError(`strconv.ParseInt: parsing "${value}": invalid syntax`);
    return Number.parseInt(value, 10);
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === null) return 0;
  throw new ConversionError(`'' expected type 'int', got unconvertible type '${jsonKind(value)}'`);
}

function toMapField(value: unknown): Record<string, string> {
  if (value === null || value === undefined || value === "") return {};
  const objects = Array.isArray(value) ? value : [value];
  const out: Record<string, string> = {};
  for (const item of objects) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      throw new ConversionError(`'' expected a map, got '${jsonKind(item)}'`);
    }
    for (const [k, v] of Object.entries(item as Record<string, unknown>)) out[k] = goFormat(v);
  }
  return out;
}

function toCommaList(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  const parts = Array.isArray(value) ? value.map(toStringField) : toStringField(value).split(",");
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return "slice";
  if (value === null) return "nil";
  if (typeof value === "object") return "map";
  if (typeof value === "number") return "float64";
  return typeof value;
}

/** Convert one value to a field type; throws the 400 Vault gives for a bad input. */
export function convertField(name: string, spec: FieldSpec, value: unknown): unknown {
  try {
    switch (spec.type) {
      case "string":
        return toStringField(value);
      case "bool":
        return toBoolField(value);
      case "int":
        return toIntField(value);
      case "duration":
        return parseDurationSeconds(value);
      case "map":
        return toMapField(value);
      case "commaList":
        return toCommaList(value);
      case "raw":
        return value;
    }
  } catch (err) {
    if (err instanceof ConversionError) {
      throw badRequest(
        `Field validation failed: error converting input ${goFormat(value)} for field "${name}": ${err.message}`,
      );
    }
    throw err;
  }
}

/**
 * Convert a request body against a schema. Path-captured fields (`pathFields`) are
 * skipped here; the caller supplies them from the URL.
 */
export function parseFields(body: Record<string, unknown>, schema: FieldSchema): ParsedFields {
  const values: Record<string, unknown> = {};
  const provided = new Set<string>();
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    const spec = schema[name];
    if (!spec) {
      unknown.push(name);
      continue;
    }
    provided.add(name);
    values[name] = convertField(name, spec, value);
  }
  for (const [name, spec] of Object.entries(schema)) {
    if (!provided.has(name))
      values[name] = spec.default === undefined ? defaultFor(spec.type) : structuredClone(spec.default);
  }
  unknown.sort();
  return { values, provided, unknown };
}

function defaultFor(type: FieldType): unknown {
  switch (type) {
    case "string":
      return "";
    case "bool":
      return false;
    case "int":
    case "duration":
      return 0;
    case "map":
      return {};
    case "commaList":
      return [];
    case "raw":
      return undefined;
  }
}

/** Vault's warning for ignored parameters (Vault's sdk/framework), or none. */
export function unknownFieldWarnings(unknown: string[]): string[] {
  return unknown.length === 0 ? [] : [`Endpoint ignored these unrecognized parameters: [${unknown.join(" ")}]`];
}

/** Compact duration text for reads (S12): `4h`, `1h30m`, `30s`, `0s`. */
export function formatDuration(seconds: number): string {
  if (seconds <= 0) return "0s";
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}h` : ""}${m ? `${m}m` : ""}${s ? `${s}s` : ""}`;
}
