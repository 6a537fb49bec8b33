import { requestDto, withPaging } from '@deals/wire';
import { z } from 'zod';

const MAX_ID = 128;

/** GET /v1/sandbox_mail: `count`, `per_page`, `page`. */
export const sandboxMailListQuery = withPaging({}, 'sandbox_mail');
export class SandboxMailListQuery extends requestDto(sandboxMailListQuery) {}

export const sandboxMailParams = z
  .object({
    mail_id: z
      .string()
      .min(1, 'is required')
      .max(MAX_ID, `must be at most ${MAX_ID} characters`)
      .meta({ description: 'the kept email', example: 'sm_4Jq0c2xTn8Wb1YkZrQe7Lm' }),
  })
  .meta({ 'x-resource': 'sandbox_mail' });
export class SandboxMailParams extends requestDto(sandboxMailParams) {}
