/**
 * The route description of /api/v2 (decision B14): every route lists
 * `operation({...})` beside its `rights(...)`. The description holds the route's summary,
 * the schemas of its body and query, and its answers by status. The handler validates with
 * the same object (`await op.body(c)`, `op.query(c)`); it runs after the route's
 * `rights(...)` middleware (../route-rights.ts), so a caller without the right gets 404
 * before any 4xx of validation (N2), and the OpenAPI
 * document (./openapi.ts) reads the descriptions back from Hono's `app.routes`, so each
 * schema is written once.
 */
import type { Context, MiddlewareHandler } from "hono";
import * as v from "valibot";
import { readJsonObject } from "../../lib/http/body";
import { fromComposedHandler } from "../route-rights";
import { documentError, queryError } from "./issues";

/** One answer of a route: its description and, when it has a body, the body's schema. */
export interface AnswerSpec {
  description: string;
  /** The body's schema; absent: no body (204 and the like). */
  schema?: v.GenericSchema;
  /** Media type of the body; default `application/vnd.api+json` (N1). */
  contentType?: string;
  /** Response headers the answer always carries. */
  headers?: Record<string, { description: string; schema?: v.GenericSchema }>;
}

export interface OperationSpec<B extends v.GenericSchema | undefined, Q extends v.GenericSchema | undefined> {
  summary: string;
  description?: string;
  /** Group in the document (the feature). */
  tag: string;
  /** The request document, validated by `body(c)`. */
  body?: B;
  /** The query parameters (an object schema), validated by `query(c)`. */
  query?: Q;
  /** Success answers by status; the error answers each route can give are added by the generator. */
  answers: Record<number, AnswerSpec>;
  /** Error statuses particular to this route beyond the common ones (e.g. 409). */
  errors?: number[];
}

type Out<S> = S extends v.GenericSchema ? v.InferOutput<S> : never;

/** A route description: a pass-through middleware carrying the operation's OpenAPI description, and the route's validators. */
export type Operation<
  B extends v.GenericSchema | undefined,
  Q extends v.GenericSchema | undefined,
> = MiddlewareHandler & {
  readonly spec: OperationSpec<B, Q>;
  /** Read the body (B5's limit, B9's depth) and validate it: 400/413 for a body that is not a JSON object, 422 with pointers otherwise. */
  body(c: Context): Promise<Out<B>>;
  /** Validate the query string: 400 with `source.parameter`. */
  query(c: Context): Out<Q>;
};

const DESCRIPTION = Symbol.for("keyway.nocode.operation");

/** Valibot's configuration for every request: each member reports its first failure only. */
const PARSE_CONFIG = { abortPipeEarly: true } as const;

/**
 * Validate a parsed request document with `schema`: 422 with pointers when it is not the
 * document (the console's forms build the API's documents and read them with this too).
 */
export function validDocument<S extends v.GenericSchema>(schema: S, document: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, document, PARSE_CONFIG);
  if (!result.success) throw documentError(result.issues);
  return result.output;
}

/** Describe a route (see the module comment). */
export function operation<
  B extends v.GenericSchema | undefined = undefined,
  Q extends v.GenericSchema | undefined = undefined,
>(spec: OperationSpec<B, Q>): Operation<B, Q> {
  const handler: MiddlewareHandler = async (_c, next) => {
    await next();
  };
  const described = Object.assign(handler, {
    [DESCRIPTION]: spec,
    spec,
    async body(c: Context): Promise<Out<B>> {
      if (!spec.body) throw new Error(`${spec.summary}: the operation declares no body`);
      return validDocument(spec.body, await readJsonObject(c.req.raw)) as Out<B>;
    },
    query(c: Context): Out<Q> {
      if (!spec.query) throw new Error(`${spec.summary}: the operation declares no query`);
      const result = v.safeParse(spec.query, c.req.query(), PARSE_CONFIG);
      if (!result.success) throw queryError(result.issues);
      return result.output as Out<Q>;
    },
  });
  return described;
}

/** The description a route handler carries (or the handler Hono composed it into), or undefined. */
export function operationOf(
  handler: unknown,
): OperationSpec<v.GenericSchema | undefined, v.GenericSchema | undefined> | undefined {
  return fromComposedHandler(
    handler,
    (fn) =>
      (fn as { [DESCRIPTION]?: OperationSpec<v.GenericSchema | undefined, v.GenericSchema | undefined> })[DESCRIPTION],
  );
}
