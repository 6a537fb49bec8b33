import { RequestsInFlight } from './requests-in-flight';

describe('RequestsInFlight', () => {
  it('counts a request until it is answered and its response closed, in either order', async () => {
    const inFlight = new RequestsInFlight();
    const waited = inFlight.begin();
    const gone = inFlight.begin();
    expect(inFlight.size).toBe(2);
    // Answered, then sent: the usual way.
    inFlight.answered(waited);
    expect(inFlight.size).toBe(2);
    inFlight.closed(waited);
    expect(inFlight.size).toBe(1);
    // Its client went away first: still worked on until its answer.
    inFlight.closed(gone);
    expect([inFlight.size, inFlight.clientGone]).toEqual([1, 1]);
    const drained = inFlight.drained(60_000);
    inFlight.answered(gone);
    inFlight.answered(gone);
    inFlight.closed(gone);
    expect(await drained).toBe(true);
    expect([inFlight.size, inFlight.clientGone]).toEqual([0, 0]);
  });

  it('gives up waiting after its time when a request is still worked on', async () => {
    const inFlight = new RequestsInFlight();
    inFlight.begin();
    expect(await inFlight.drained(1)).toBe(false);
    expect(await new RequestsInFlight().drained(0)).toBe(true);
  });
});
