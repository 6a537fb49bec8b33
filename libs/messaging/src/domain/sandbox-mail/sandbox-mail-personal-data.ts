import type { PersonalFields } from '@deals/kernel';

/** A kept email's address and bodies are its user's personal data: encrypted under the user's key in the log, gone with it. */
export const MESSAGING_PERSONAL_FIELDS: PersonalFields = new Map([
  [
    'SandboxMailKept',
    {
      owner: (data) => (typeof data.userId === 'string' ? data.userId : null),
      paths: [['to'], ['text'], ['html']],
      // An email for a user erased meanwhile is kept without what it would have said.
      whenErased: 'drop' as const,
    },
  ],
]);
