import { accountOf } from '@deals/kernel';
import { ApiAnswer, ApiRequest, Caller, CurrentCaller, CalledBy, PARTNERS } from '@deals/wire';
import { Body, Controller, Get, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ChangePartnerRollbackWindow } from '../commands/partner-account.commands';
import { DEFAULT_ROLLBACK_WINDOW_HOURS } from '../domain/partner/partner.events';
import { PartnerQueries } from '../queries/partner.queries';
import { PartnerSettingsAnswer, toPartnerSettings } from './account.answers';
import { PartnerSettingsBody } from './partner-settings.request';

/** The calling partner's own settings (partner credentials only: no user's access token reaches them). */
@ApiTags('accounts')
@Controller('v1/partner_settings')
export class PartnerSettingsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly partners: PartnerQueries,
  ) {}

  @Get()
  @CalledBy(...PARTNERS)
  @ApiOperation({ summary: "The partner's settings", description: 'As the partner last set them, defaults filled in.' })
  @ApiAnswer(PartnerSettingsAnswer)
  async get(@CurrentCaller() caller: Caller) {
    return { status: 'success', partner_settings: toPartnerSettings(await this.partners.settings(accountOf(caller.partnerId))) };
  }

  @Put()
  @CalledBy(...PARTNERS)
  @ApiOperation({
    summary: "Set the partner's settings",
    description:
      "`redemption_rollback_window_hours`: how long after a coupon's redemption it may be rolled back (0 to 720; 0: never; null: back to " +
      `the default, ${DEFAULT_ROLLBACK_WINDOW_HOURS}). Applies to the next rollback, of redemptions made before it too.`,
  })
  @ApiAnswer(PartnerSettingsAnswer, { errors: [422] })
  @ApiRequest({ body: PartnerSettingsBody })
  async set(@Body() body: PartnerSettingsBody, @CurrentCaller() caller: Caller) {
    const account = accountOf(caller.partnerId);
    await this.commands.execute(new ChangePartnerRollbackWindow(account, body.redemption_rollback_window_hours, caller));
    return { status: 'success', partner_settings: toPartnerSettings(await this.partners.settings(account)) };
  }
}
