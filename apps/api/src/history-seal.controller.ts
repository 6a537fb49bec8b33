import { cardLinkStream } from '@deals/engagement';
import { HistoryProofs, NotFound } from '@deals/kernel';
import { batchDeliveryStream } from '@deals/messaging';
import {
  ApiAnswer,
  ApiRequest,
  RequestParameters,
  requestDto,
  signedCheckpointSchema,
  streamSealSchema,
  toSignedCheckpoint,
  toStreamSeal,
  CalledBy,
} from '@deals/wire';
import { Controller, Get, Param } from '@nestjs/common';
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

const SealAnswer = z.object({ status: z.literal('success'), seal: streamSealSchema }).meta({
  example: {
    status: 'success',
    seal: {
      algorithm: 'Ed25519',
      public_key: '-----BEGIN PUBLIC KEY-----\n…\n-----END PUBLIC KEY-----\n',
      stream: 'cardlink-cl_8Qd2',
      events: [],
      removed: [],
      checkpoints: [],
    },
  },
});
const cardLinkParams = z.object({ card_link_id: z.string().min(1).max(64) }).meta({ 'x-resource': 'card_link' });
class CardLinkParams extends requestDto(cardLinkParams) {}
const batchParams = z.object({ batch_id: z.string().min(1).max(64) }).meta({ 'x-resource': 'batch' });
class BatchParams extends requestDto(batchParams) {}

/**
 * The log's seal as auditors read it: the key its checkpoints are signed with (public: anyone may
 * check a checkpoint an auditor kept), and the signed checkpoints themselves (auditor credentials).
 */
@ApiTags('audit')
@Controller('audit')
export class HistorySealController {
  constructor(private readonly proofs: HistoryProofs) {}

  @Get('checkpoint-key')
  @CalledBy('anyone')
  @ApiOperation({
    summary: 'The key checkpoints are signed with',
    description: 'No credentials needed: the installation’s Ed25519 public key, to check signed checkpoints with.',
  })
  @ApiAnswer(CheckpointKeyAnswer, { errors: [] })
  key() {
    return { status: 'success', algorithm: 'Ed25519', public_key: this.proofs.publicKeyPem() };
  }

  @Get('card_links/:card_link_id/seal')
  @CalledBy('auditor')
  @ApiOperation({
    summary: "A card link's sealed history",
    description:
      'For auditor credentials: its stream’s events as stored, with their seals, audit paths and signed checkpoints (as a purchase’s `seal`).',
  })
  @ApiAnswer(SealAnswer, { errors: [403, 404] })
  @ApiRequest({ params: CardLinkParams })
  async cardLinkSeal(@Param() params: CardLinkParams) {
    return this.sealOf(cardLinkStream(params.card_link_id), 'card link');
  }

  @Get('batches/:batch_id/seal')
  @CalledBy('auditor')
  @ApiOperation({
    summary: "A targeted-email batch's sealed delivery",
    description:
      'For auditor credentials: its delivery stream’s events (each recipient’s outcome) as stored, with their seals, audit paths and signed checkpoints.',
  })
  @ApiAnswer(SealAnswer, { errors: [403, 404] })
  @ApiRequest({ params: BatchParams })
  async batchSeal(@Param() params: BatchParams) {
    return this.sealOf(batchDeliveryStream(params.batch_id), 'batch');
  }

  private async sealOf(streamId: string, what: string) {
    const proof = await this.proofs.streamProof(streamId);
    // eslint-disable-next-line no-restricted-syntax -- a resource's name of ours ('card link', 'batch')
    if (proof.events.length === 0 && proof.removed.length === 0) throw new NotFound(`${what} not found`);
    return { status: 'success', seal: toStreamSeal(proof, this.proofs.publicKeyPem()) };
  }

  @Get('checkpoints')
  @CalledBy('auditor')
  @ApiOperation({
    summary: 'The signed checkpoints',
    description: `For auditor credentials: the log's checkpoints in order from \`from\`, ${CHECKPOINTS_PAGE} a page; keep them, to check the log against later.`,
  })
  @ApiAnswer(CheckpointListAnswer, { errors: [403, 422] })
  @ApiRequest({ query: CheckpointQuery })
  async checkpoints(@RequestParameters() query: CheckpointQuery) {
    const page = await this.proofs.checkpoints(query.from, CHECKPOINTS_PAGE + 1);
    const more = page.length > CHECKPOINTS_PAGE;
    return {
      status: 'success',
      checkpoints: page.slice(0, CHECKPOINTS_PAGE).map(toSignedCheckpoint),
      next_from: more ? query.from + CHECKPOINTS_PAGE : null,
    };
  }
}
