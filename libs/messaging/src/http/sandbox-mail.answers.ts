import { z } from 'zod';
import type { SandboxMailKept } from '../domain/sandbox-mail/sandbox-mail.decider';
import type { SandboxMail } from '../projections/sandbox-mail/sandbox-mail.projection';

const mailFields = {
  id: z.string(),
  user_id: z.string().meta({ description: 'the sandbox user it was for' }),
  test_clock: z.string().nullable().meta({ description: "the test clock whose world sent it; null: the sandbox's own" }),
  subject: z.string(),
  message_id: z.string().meta({ description: 'its Message-ID' }),
  kept_at: z.string().meta({ description: 'when it was kept (real time, ISO 8601)' }),
};

/** One kept email in a list. */
export const sandboxMailSummarySchema = z.object(mailFields).meta({
  id: 'SandboxMailSummary',
  description: "an email kept in a sandbox's outbox instead of sent",
  example: {
    id: 'sm_4Jq0c2xTn8Wb1YkZrQe7Lm',
    user_id: 'u4Kd8',
    test_clock: 'clock_P7P72Z9DDJ3Ix1zDc4n',
    subject: 'Chicago: today’s deals',
    message_id: '<digest-chicago-2027-01-10.s1@deals-service>',
    kept_at: '2026-06-15T12:00:00Z',
  },
});

/** One kept email, whole. */
export const sandboxMailSchema = z
  .object({
    ...mailFields,
    to: z.string().nullable().meta({ description: 'the address it was for; null once the user was erased' }),
    text: z.string().nullable().meta({ description: 'its plain-text body; null once the user was erased' }),
    html: z.string().nullable().meta({ description: 'its HTML body; null once the user was erased' }),
  })
  .meta({
    id: 'SandboxMail',
    description: "an email kept in a sandbox's outbox instead of sent, whole",
    example: {
      id: 'sm_4Jq0c2xTn8Wb1YkZrQe7Lm',
      user_id: 'u4Kd8',
      test_clock: null,
      subject: 'Spa day for two',
      message_id: '<batch-b7Kq2.u4Kd8@deals-service>',
      kept_at: '2026-06-15T12:00:00Z',
      to: 'ann@example.com',
      text: 'Spa day for two: $49.00 (a $120.00 value)',
      html: '<html><body><h1>Spa day for two</h1></body></html>',
    },
  });

export const SandboxMailListAnswer = z
  .union([
    z.object({ status: z.literal('success'), sandbox_mail: z.array(sandboxMailSummarySchema) }),
    z.object({ status: z.literal('success'), count: z.number().int() }),
  ])
  .meta({ example: { status: 'success', sandbox_mail: [(sandboxMailSummarySchema.meta() as { example: unknown }).example] } });
export const SandboxMailAnswer = z
  .object({ status: z.literal('success'), sandbox_mail: sandboxMailSchema })
  .meta({ example: { status: 'success', sandbox_mail: (sandboxMailSchema.meta() as { example: unknown }).example } });

const iso = (at: string) => at.replace(/\.\d{3}Z$/, 'Z');

export const toSandboxMailSummary = (mail: SandboxMail) => ({
  id: mail._id,
  user_id: mail.userId,
  test_clock: mail.testClockId,
  subject: mail.subject,
  message_id: mail.messageId,
  kept_at: iso(mail.keptAt),
});

export const toSandboxMail = (mail: SandboxMail, kept: SandboxMailKept['data']) => ({
  ...toSandboxMailSummary(mail),
  to: kept.to ?? null,
  text: kept.text ?? null,
  html: kept.html ?? null,
});
