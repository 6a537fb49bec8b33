import { EventStore, Scheduler, ViewStore } from '@deals/kernel';
import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';

/** Each port's backend and whether it answers. Open to all (wire PUBLIC_PATHS): it reveals nothing about partners. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicator: HealthIndicatorService,
    private readonly store: EventStore,
    private readonly views: ViewStore,
    private readonly scheduler: Scheduler,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    const probe = (key: string, backend: string, ping: () => Promise<void>) => async () => {
      const check = this.indicator.check(key);
      try {
        await ping();
        return check.up({ backend });
      } catch (error) {
        return check.down({ backend, message: error instanceof Error ? error.message : String(error) });
      }
    };
    return this.health.check([
      probe('eventStore', this.store.backend, () => this.store.ping()),
      probe('viewStore', this.views.backend, () => this.views.ping()),
      probe('scheduler', this.scheduler.backend, () => this.scheduler.ping()),
    ]);
  }
}
