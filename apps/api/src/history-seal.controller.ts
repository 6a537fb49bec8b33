import { Forbidden, HistoryProofs } from '@deals/kernel';
import {
  ApiAnswer,
  ApiRequest,
  CurrentPartner,
  PartnerRef,
  RequestParameters,
  requestDto,
  signedCheckpointSchema,
  toSignedCheckpoint,
} from '@deals/wire';
import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { z } from 'zod';

/** Checkpoints one page lists at most. */
const CHECKPOINTS_PAGE = 100;

const CheckpointKeyAnswer = z
  .object({
    status: z.literal('success'),
    algorithm: z.literal('Ed25519'),
    public_key: z.string().meta({ description: 'PEM (SPKI)' }),
  })
  .meta({
    example: {
      status: 'success',
      algorithm: 'Ed25519',
      public_key: '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n',
    },
  });

const CheckpointListAnswer = z
  .object({
    status: z.literal('success'),
    checkpoints: z.array(signedCheckpointSchema),
    next_from: z.number().int().nullable().meta({ description: 'the `from` of the next page; null at the last checkpoint' }),
  })
  .meta({ example: { status: 'success', checkpoints: [], next_from: null } });

const checkpointQuery = z
  .object({
    from: z.coerce.number().int().min(1).default(1).meta({ description: 'the first checkpoint’s number' }),
  })
  .meta({ 'x-resource': 'request' });
class CheckpointQuery extends requestDto(checkpointQuery) {}

/**
 * The log's seal as auditors read it: the key its checkpoints are signed with (public: anyone may
 * check a checkpoint an auditor kept), and the signed checkpoints themselves (auditor credentials).
 */
@ApiTags('audit')
@Controller('audit')
export class HistorySealController {
  constructor(private readonly proofs: HistoryProofs) {}

  @Get('checkpoint-key')
  @ApiOperation({
    summary: 'The key checkpoints are signed with',
    description: 'No credentials needed: the installation’s Ed25519 public key, to check signed checkpoints with.',
  })
  @ApiAnswer(CheckpointKeyAnswer, { errors: [] })
  key() {
    return { status: 'success', algorithm: 'Ed25519', public_key: this.proofs.publicKeyPem() };
  }

  @Get('checkpoints')
  @ApiOperation({
    summary: 'The signed checkpoints',
    description: `For auditor credentials: the log's checkpoints in order from \`from\`, ${CHECKPOINTS_PAGE} a page; keep them, to check the log against later.`,
  })
  @ApiAnswer(CheckpointListAnswer, { errors: [403, 422] })
  @ApiRequest({ query: CheckpointQuery })
  async checkpoints(@RequestParameters() query: CheckpointQuery, @CurrentPartner() partner: PartnerRef) {
    if (partner.role !== 'auditor') throw new Forbidden('checkpoints are for auditor credentials');
    const page = await this.proofs.checkpoints(query.from, CHECKPOINTS_PAGE + 1);
    const more = page.length > CHECKPOINTS_PAGE;
    return {
      status: 'success',
      checkpoints: page.slice(0, CHECKPOINTS_PAGE).map(toSignedCheckpoint),
      next_from: more ? query.from + CHECKPOINTS_PAGE : null,
    };
  }
}
