/** A text field of a posted form ('' when absent or repeated as a list). */
export const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};
