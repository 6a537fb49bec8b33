import { PaymentGateway } from '@deals/kernel';
import type { TestApi } from './api-harness';

/**
 * Holds the next charge of a service running in this process once its processor has made it, the
 * answer kept back until `release()`: a purchase is being charged for as long as the test needs,
 * whatever the machine's speed (the simulated processor's slow test card answers after a set time,
 * which a loaded machine can outlast before the test has done what it meant to do meanwhile).
 * `charging` resolves once the charge is held; `release()` also undoes the hold if no charge came.
 */
export function holdNextCharge(api: Pick<TestApi, 'get'>): { charging: Promise<void>; release: () => void } {
  const gateway = api.get(PaymentGateway);
  const charge = gateway.charge.bind(gateway);
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const charging = new Promise<void>((resolve) => (held = resolve));
  const spy = jest.spyOn(gateway, 'charge').mockImplementationOnce(async (request) => {
    // The gateway's own method again for every later charge.
    spy.mockRestore();
    const outcome = await charge(request);
    held();
    await released;
    return outcome;
  });
  return {
    charging,
    release: () => {
      spy.mockRestore();
      release();
    },
  };
}
