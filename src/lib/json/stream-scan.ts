/**
 * A push scanner of JSON text (RFC 8259) for documents too large to parse whole: text is
 * written in pieces as it arrives and the scanner reports what it finds, with the path of
 * each value, keeping only the value being read. A string value may be taken whole (up to a
 * limit), handed on in pieces as it is read, or skipped; so a 64 MiB state is summarised,
 * and the base64 string inside a request document decoded, in bounded memory (decision N20).
 *
 * Grammar: RFC 8259 §2–§7 (one value with optional white space around it; no comments, no
 * trailing commas, no control characters inside strings). Duplicate names are reported as
 * they come (the consumer decides; JSON.parse keeps the last).
 */

/** Why the text is not JSON, or exceeds a limit. */
export class JsonScanError extends Error {}

export type JsonPathSegment = string | number;
export type JsonPath = readonly JsonPathSegment[];
export type JsonScalar = string | number | boolean | null;

/** How a string value at a path is taken. */
export type StringTaking = "whole" | "pieces" | "skip";

/** What the scanner reports; each is optional. `path` is only valid during the call. */
export interface JsonScanEvents {
  /** How to take the string value at `path` (default `whole`). */
  stringAt?(path: JsonPath): StringTaking;
  /** A piece of a string taken in pieces (escapes already decoded). */
  piece?(text: string): void;
  /** A scalar at `path`; a string taken in pieces or skipped is reported as `null` text-less (`skipped` true). */
  scalar?(path: JsonPath, value: JsonScalar, skipped: boolean): void;
  /** An object or array starts at `path`. */
  open?(path: JsonPath, kind: "object" | "array"): void;
  /** The object or array at `path` ends. */
  close?(path: JsonPath, kind: "object" | "array"): void;
}

export interface JsonScanLimits {
  /** The longest name or string taken whole, in UTF-16 code units. */
  maxString: number;
  /** The deepest nesting of objects and arrays (a top-level object is depth 1). */
  maxDepth: number;
}

enum Mode {
  Value,
  ValueOrEnd,
  KeyOrEnd,
  Key,
  Colon,
  AfterValue,
  String,
  Escape,
  Unicode,
  Number,
  Literal,
  Done,
}

const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const NUMBER_CHAR = /[-+.eE0-9]/;
/** The next character that ends a plain run inside a string. */
const STRING_STOP = /["\\\u0000-\u001f]/g;

const isSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\r";

export class JsonScanner {
  private mode = Mode.Value;
  private readonly path: JsonPathSegment[] = [];
  private readonly kinds: ("object" | "array")[] = [];
  /** For a string: whether it is a name, and how a value is taken. */
  private stringIsKey = false;
  private taking: StringTaking = "whole";
  private text = "";
  private unicode = "";
  private literal = "";
  private literalAt = 0;
  private started = false;

  constructor(
    private readonly events: JsonScanEvents,
    private readonly limits: JsonScanLimits,
  ) {}

  /** Scan the next piece of the text. */
  write(chunk: string): void {
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.mode === Mode.String) {
        STRING_STOP.lastIndex = i;
        const stop = STRING_STOP.exec(chunk);
        const end = stop ? stop.index : n;
        if (end > i) this.addText(chunk.slice(i, end));
        if (!stop) return;
        i = end + 1;
        const c = stop[0];
        if (c === '"') this.endString();
        else if (c === "\\") this.mode = Mode.Escape;
        else throw new JsonScanError("a control character inside a string");
        continue;
      }
      const c = chunk[i]!;
      i++;
      switch (this.mode) {
        case Mode.Escape:
          if (c === "u") {
            this.unicode = "";
            this.mode = Mode.Unicode;
          } else {
            const decoded = ESCAPES[c];
            if (decoded === undefined) throw new JsonScanError(`an invalid escape \\${c}`);
            this.addText(decoded);
            this.mode = Mode.String;
          }
          break;
        case Mode.Unicode:
          if (!/[0-9a-fA-F]/.test(c)) throw new JsonScanError("an invalid \\u escape");
          this.unicode += c;
          if (this.unicode.length === 4) {
            this.addText(String.fromCharCode(Number.parseInt(this.unicode, 16)));
            this.mode = Mode.String;
          }
          break;
        case Mode.Number:
          if (NUMBER_CHAR.test(c)) this.text += c;
          else {
            this.endNumber();
            i--; // the character after the number is read again
          }
          if (this.text.length > 64) throw new JsonScanError("a number is too long");
          break;
        case Mode.Literal:
          if (c !== this.literal[this.literalAt]) throw new JsonScanError(`unexpected "${c}"`);
          if (++this.literalAt === this.literal.length) {
            this.scalar(this.literal === "null" ? null : this.literal === "true", false);
          }
          break;
        default:
          if (!isSpace(c)) this.structural(c);
      }
    }
  }

  /** The text ended: throws unless it was one complete value. */
  end(): void {
    if (this.mode === Mode.Number && this.kinds.length === 0) this.endNumber();
    if (this.mode !== Mode.Done) throw new JsonScanError(this.started ? "the JSON text is truncated" : "no JSON value");
  }

  private structural(c: string): void {
    switch (this.mode) {
      case Mode.Value:
      case Mode.ValueOrEnd:
        if (c === "]" && this.mode === Mode.ValueOrEnd) this.close("array");
        else this.value(c);
        return;
      case Mode.KeyOrEnd:
      case Mode.Key:
        if (c === "}" && this.mode === Mode.KeyOrEnd) {
          this.close("object");
          return;
        }
        if (c !== '"') throw new JsonScanError(`expected a name, found "${c}"`);
        this.stringIsKey = true;
        this.text = "";
        this.mode = Mode.String;
        return;
      case Mode.Colon:
        if (c !== ":") throw new JsonScanError(`expected ":", found "${c}"`);
        this.mode = Mode.Value;
        return;
      case Mode.AfterValue: {
        const kind = this.kinds[this.kinds.length - 1];
        if (c === "," && kind === "object") {
          this.mode = Mode.Key;
          return;
        }
        if (c === "," && kind === "array") {
          this.path[this.path.length - 1] = (this.path[this.path.length - 1] as number) + 1;
          this.mode = Mode.Value;
          return;
        }
        if ((c === "}" && kind === "object") || (c === "]" && kind === "array")) {
          this.close(kind);
          return;
        }
        throw new JsonScanError(`unexpected "${c}"`);
      }
      default:
        throw new JsonScanError(`unexpected "${c}" after the JSON value`);
    }
  }

  private value(c: string): void {
    this.started = true;
    if (c === "{" || c === "[") {
      const kind = c === "{" ? "object" : "array";
      if (this.kinds.length >= this.limits.maxDepth)
        throw new JsonScanError(`nesting is deeper than the limit of ${this.limits.maxDepth} levels`);
      this.events.open?.(this.path, kind);
      this.kinds.push(kind);
      if (kind === "array") this.path.push(0);
      this.mode = kind === "object" ? Mode.KeyOrEnd : Mode.ValueOrEnd;
      return;
    }
    if (c === '"') {
      this.stringIsKey = false;
      this.taking = this.events.stringAt?.(this.path) ?? "whole";
      this.text = "";
      this.mode = Mode.String;
      return;
    }
    if (c === "-" || (c >= "0" && c <= "9")) {
      this.text = c;
      this.mode = Mode.Number;
      return;
    }
    const literal = c === "t" ? "true" : c === "f" ? "false" : c === "n" ? "null" : null;
    if (!literal) throw new JsonScanError(`unexpected "${c}"`);
    this.literal = literal;
    this.literalAt = 1;
    this.mode = Mode.Literal;
  }

  private addText(text: string): void {
    if (!this.stringIsKey && this.taking !== "whole") {
      if (this.taking === "pieces") this.events.piece?.(text);
      return;
    }
    if (this.text.length + text.length > this.limits.maxString)
      throw new JsonScanError(`a string is longer than the limit of ${this.limits.maxString} characters`);
    this.text += text;
  }

  private endString(): void {
    if (this.stringIsKey) {
      this.path.push(this.text);
      this.text = "";
      this.mode = Mode.Colon;
      return;
    }
    const whole = this.taking === "whole";
    this.scalar(whole ? this.text : null, !whole);
  }

  private endNumber(): void {
    if (!NUMBER.test(this.text)) throw new JsonScanError(`an invalid number ${this.text}`);
    this.scalar(Number(this.text), false);
  }

  private scalar(value: JsonScalar, skipped: boolean): void {
    this.text = "";
    this.events.scalar?.(this.path, value, skipped);
    this.afterValue();
  }

  private close(kind: "object" | "array"): void {
    if (kind === "array") this.path.pop();
    this.kinds.pop();
    this.events.close?.(this.path, kind);
    this.afterValue();
  }

  /** A value ended: drop its name and expect what may follow it. */
  private afterValue(): void {
    if (this.kinds.length === 0) {
      this.mode = Mode.Done;
      return;
    }
    if (this.kinds[this.kinds.length - 1] === "object") this.path.pop();
    this.mode = Mode.AfterValue;
  }
}

/**
 * A value rebuilt from a scanner's events (`open`, `close`, `scalar`), for the parts of a
 * document a consumer keeps. Names such as `__proto__` are data, as JSON.parse makes them.
 */
export class JsonValueBuilder {
  root: unknown;
  private readonly stack: (Record<string, unknown> | unknown[])[] = [];

  open(path: JsonPath, kind: "object" | "array"): void {
    const container = kind === "object" ? {} : [];
    this.attach(path, container);
    this.stack.push(container);
  }

  close(): void {
    this.stack.pop();
  }

  attach(path: JsonPath, value: unknown): void {
    const parent = this.stack[this.stack.length - 1];
    if (!parent) this.root = value;
    else if (Array.isArray(parent)) parent.push(value);
    else
      Object.defineProperty(parent, String(path[path.length - 1]), {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
}
