/**
 * Runs `body` with `process.stdout.write` swallowed, so that what a service prints on start (the
 * demo partner's credentials) does not interleave with the bench table. What was swallowed is
 * returned beside the result. stderr is left alone.
 */
export async function quietStdout<T>(body: () => Promise<T>): Promise<{ result: T; swallowed: string }> {
  const write = process.stdout.write;
  let swallowed = '';
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    swallowed += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  try {
    return { result: await body(), swallowed };
  } finally {
    process.stdout.write = write;
  }
}
