/**
 * Decision B8: a test-time guard around the REAL D1 binding that enforces D1's per-statement
 * limits, which local SQLite (miniflare, workerd's test pool) does not: at most 100 bound
 * parameters, at most 100,000 bytes of SQL, at most 2,000,000 bytes of bound values (D1's
 * row, string and BLOB limit; a statement carrying more cannot store its row). A statement
 * over a limit throws as D1 would, so it fails a test instead of production.
 *
 * The guard can also make chosen statements fail (`injectD1Failure`), so a test can prove a
 * failure leaves nothing half-done. Every statement still runs on the real binding; nothing
 * is simulated. `D1_BATCH` rules: a batch fails as a whole when any of its statements is
 * chosen to fail, as D1 rolls a failed batch back.
 *
 * It is switched on by the test-only binding `D1_LIMIT_GUARD` (vitest.config.ts); without it
 * `guardEnv` returns `env` untouched, so production never pays for it.
 */

/** D1's documented limits (developers.cloudflare.com/d1/platform/limits/). */
export const D1_LIMITS = { boundParameters: 100, sqlBytes: 100_000, rowBytes: 2_000_000 } as const;

const encoder = new TextEncoder();

function valueBytes(value: unknown): number {
  if (typeof value === "string") return encoder.encode(value).length;
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  return 8;
}

/** Throws D1's error when `sql` with `params` is over one of D1's limits. */
export function checkD1Limits(sql: string, params: readonly unknown[]): void {
  if (params.length > D1_LIMITS.boundParameters) {
    throw new Error(
      `D1_ERROR: too many SQL variables: ${params.length} bound parameters (D1 allows ${D1_LIMITS.boundParameters}): SQLITE_ERROR`,
    );
  }
  const sqlBytes = encoder.encode(sql).length;
  if (sqlBytes > D1_LIMITS.sqlBytes) {
    throw new Error(
      `D1_ERROR: statement too long: ${sqlBytes} bytes of SQL (D1 allows ${D1_LIMITS.sqlBytes}): SQLITE_TOOBIG`,
    );
  }
  let bytes = 0;
  for (const p of params) bytes += valueBytes(p);
  if (bytes > D1_LIMITS.rowBytes) {
    throw new Error(
      `D1_ERROR: string or blob too big: ${bytes} bytes of bound values (D1 allows ${D1_LIMITS.rowBytes}): SQLITE_TOOBIG`,
    );
  }
}

/** A failure a test asked for: statements whose SQL matches fail, `times` times (default once). */
type FailureRule = { match: (sql: string) => boolean; remaining: number };
const failureRules: FailureRule[] = [];

/**
 * Make the next `times` statements whose SQL matches `match` fail with a D1-like error
 * (a RegExp, a substring, or a predicate). Returns a function that removes the rule.
 */
export function injectD1Failure(match: RegExp | string | ((sql: string) => boolean), times = 1): () => void {
  const test =
    typeof match === "function"
      ? match
      : typeof match === "string"
        ? (sql: string) => sql.includes(match)
        : (sql: string) => match.test(sql);
  const rule: FailureRule = { match: test, remaining: times };
  failureRules.push(rule);
  return () => {
    const i = failureRules.indexOf(rule);
    if (i >= 0) failureRules.splice(i, 1);
  };
}

/** Remove every injected failure. */
export function clearD1Failures(): void {
  failureRules.length = 0;
}

function takeFailure(sql: string): boolean {
  const rule = failureRules.find((r) => r.remaining > 0 && r.match(sql));
  if (!rule) return false;
  rule.remaining -= 1;
  if (rule.remaining === 0) failureRules.splice(failureRules.indexOf(rule), 1);
  return true;
}

function injectedError(sql: string): Error {
  return new Error(`D1_ERROR: injected failure (test D1 guard) for: ${sql.slice(0, 120)}`);
}

/** Listeners told the SQL of every call the guarded binding makes (see recordD1Statements). */
const statementListeners = new Set<(sqls: string[]) => void>();

/** One call to D1 (a single statement, or every statement of a batch) was sent. */
function ran(...sqls: string[]): void {
  for (const listener of statementListeners) listener(sqls);
}

/** What {@link recordD1Statements} saw. */
export interface D1Recording {
  /** Every statement's SQL, in the order sent (each statement of a batch on its own). */
  statements: string[];
  /** Every round trip: one entry per call, holding its statements (a batch's in order). */
  calls: string[][];
  stop(): void;
}

/**
 * Record the SQL of every statement run through the guarded binding from now on, until
 * `stop()`. Tests use it to prove what a request writes and how many round trips it makes
 * (test/worker/nocode/cache-consistency.test.ts, e4-round-trips.test.ts); the statements
 * still run on the real binding.
 */
export function recordD1Statements(): D1Recording {
  const statements: string[] = [];
  const calls: string[][] = [];
  const listener = (sqls: string[]) => {
    statements.push(...sqls);
    calls.push(sqls);
  };
  statementListeners.add(listener);
  return {
    statements,
    calls,
    stop: () => {
      statementListeners.delete(listener);
    },
  };
}

class GuardedStatement {
  constructor(
    readonly real: D1PreparedStatement,
    readonly sql: string,
  ) {}

  bind(...values: unknown[]): GuardedStatement {
    checkD1Limits(this.sql, values);
    return new GuardedStatement(this.real.bind(...values), this.sql);
  }

  private fail(): void {
    if (takeFailure(this.sql)) throw injectedError(this.sql);
    ran(this.sql);
  }

  async first(column?: string): Promise<unknown> {
    this.fail();
    return column === undefined ? this.real.first() : this.real.first(column);
  }

  async run(): Promise<D1Result> {
    this.fail();
    return this.real.run();
  }

  async all(): Promise<D1Result> {
    this.fail();
    return this.real.all();
  }

  // biome-ignore lint/suspicious/noExplicitAny: D1's raw() overloads
  async raw(options?: any): Promise<any> {
    this.fail();
    return this.real.raw(options);
  }
}

const guarded = new WeakMap<D1Database, D1Database>();
const guards = new WeakSet<object>();

/** The real binding behind a guard. */
function unwrap(statement: D1PreparedStatement): D1PreparedStatement {
  return statement instanceof GuardedStatement ? statement.real : statement;
}

/** Wrap a real D1 binding (idempotent: a guard is never wrapped twice). */
export function guardD1(real: D1Database): D1Database {
  if (guards.has(real)) return real;
  let guard = guarded.get(real);
  if (guard) return guard;
  const wrapper = {
    prepare(sql: string) {
      checkD1Limits(sql, []);
      return new GuardedStatement(real.prepare(sql), sql);
    },
    async batch(statements: D1PreparedStatement[]) {
      for (const s of statements) {
        const sql = s instanceof GuardedStatement ? s.sql : "";
        if (takeFailure(sql)) throw injectedError(sql);
      }
      ran(...statements.map((s) => (s instanceof GuardedStatement ? s.sql : "")));
      return real.batch(statements.map(unwrap));
    },
    async exec(sql: string) {
      // exec runs several statements (migrations); failures may still be injected.
      if (takeFailure(sql)) throw injectedError(sql);
      ran(sql);
      return real.exec(sql);
    },
    dump() {
      return real.dump();
    },
    withSession(constraint?: string) {
      return real.withSession(constraint);
    },
  };
  guard = wrapper as unknown as D1Database;
  guards.add(guard);
  guarded.set(real, guard);
  return guard;
}

/** The test-only binding that switches the guard on (vitest.config.ts). */
type GuardSwitch = { D1_LIMIT_GUARD?: unknown };

/**
 * `env` with its `DB` behind the guard when the test-only `D1_LIMIT_GUARD` binding is set;
 * `env` itself otherwise (production). Called by the fetch and queue entry points.
 */
const guardedEnvs = new WeakMap<Env, Env>();

export function guardEnv(env: Env): Env {
  if (!(env as GuardSwitch).D1_LIMIT_GUARD || guards.has(env.DB)) return env;
  let out = guardedEnvs.get(env);
  if (!out) {
    out = { ...env, DB: guardD1(env.DB) };
    guardedEnvs.set(env, out);
  }
  return out;
}

/**
 * A D1 binding that counts its round trips (a statement run, or a batch) in `counter.calls`,
 * in production too: the pool Durable Object of the execution plane reports its count, so
 * `npm run bench` can check N18's budget of D1 queries per idle agent-minute.
 */
export function countD1Calls(real: D1Database, counter: { calls: number }): D1Database {
  const statement = (s: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(s, {
      get(target, key) {
        if (key === "bind") return (...values: unknown[]) => statement(target.bind(...values));
        if (key === "first" || key === "run" || key === "all" || key === "raw") {
          const method = Reflect.get(target, key) as (...args: unknown[]) => unknown;
          return (...args: unknown[]) => {
            counter.calls++;
            return method.apply(target, args);
          };
        }
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return new Proxy(real, {
    get(target, key) {
      if (key === "prepare") return (sql: string) => statement(target.prepare(sql));
      if (key === "batch")
        return (statements: D1PreparedStatement[]) => {
          counter.calls++;
          return target.batch(statements);
        };
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
