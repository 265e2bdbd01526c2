/** Whether an error thrown by D1 is a UNIQUE or PRIMARY KEY violation (a lost race on a name). */
export function isUniqueViolation(err: unknown): boolean {
  const text =
    err instanceof Error ? `${err.message} ${String((err as { cause?: unknown }).cause ?? "")}` : String(err);
  return /UNIQUE constraint failed|PRIMARY KEY/i.test(text);
}
