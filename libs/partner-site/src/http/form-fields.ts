import { clipText, MAX_ISSUE_TEXT } from '@deals/kernel';

/** A text field of a posted form ('' when absent or repeated as a list). */
export const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/** The most of a client's text a page shows back (a message naming it, a form's value): an answer never grows with what was sent. */
export const MAX_SHOWN_TEXT = MAX_ISSUE_TEXT;

/** `text` as a page shows it back: at most `max` characters (a cut one ends with an ellipsis). */
export const shownBack = (text: string, max = MAX_SHOWN_TEXT): string => clipText(text, max);
