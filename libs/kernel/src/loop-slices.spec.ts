import { eachInSlices, LoopSlices } from './loop-slices';

describe('work cut into slices of the event loop', () => {
  it('lets what waits on the loop run between two slices, never inside one', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('another request'));
    await eachInSlices([1, 2, 3, 4, 5], 2, (n) => order.push(`item ${n}`));
    expect(order).toEqual(['item 1', 'item 2', 'another request', 'item 3', 'item 4', 'item 5']);
  });

  it('yields once a slice holds its count of units, however they come', async () => {
    const slices = new LoopSlices(10);
    let turned = false;
    setImmediate(() => (turned = true));
    await slices.spend(4);
    await slices.spend(5);
    expect(turned).toBe(false);
    await slices.spend(1);
    expect(turned).toBe(true);
  });
});
