import { CredentialVerifier } from '@deals/wire';
import { Module } from '@nestjs/common';
import { CreatePartnerHandler } from './commands/create-partner.command';
import { PartnerCredentialVerifier } from './http/partner-credential-verifier';

/** Partners (and, with the accounts issue, users, cards and access tokens). */
@Module({
  providers: [CreatePartnerHandler, { provide: CredentialVerifier, useClass: PartnerCredentialVerifier }],
  exports: [CredentialVerifier],
})
export class AccountsModule {}
