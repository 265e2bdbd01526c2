/** Whether an error thrown by D1 is a UNIQUE or PRIMARY KEY violation (a lost race on a name). */
export function isUniqueViolation(err: unknown): boolean {
  const text =
    err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? "")}` : String(err);
  return /UNIQUE constraint failed|PRIMARY KEY/i.test(text);
}

/**
 * Runs an insert whose UNIQUE or PRIMARY KEY index decides a race (a name taken, or two
 * creates of one name at once): a violation becomes `taken()`'s error, anything else is
 * rethrown as it is. The insert is passed unstarted (a drizzle query runs when awaited).
 */
export async function insertUnique<T>(insert: PromiseLike<T>, taken: () => Error): Promise<T> {
  try {
    return await insert;
  } catch (err) {
    if (isUniqueViolation(err)) throw taken();
    throw err;
  }
}
