import { defineProjection, TestClockEvent, ViewDocument } from '@deals/kernel';

/** "Which test clocks has this sandbox, at which instant, and are they still advancing?" */
export interface TestClockView extends ViewDocument {
  partnerId: string;
  name: string | null;
  frozenTime: string;
  status: 'ready' | 'advancing';
  /** Where the advance under way ends; null when ready. */
  advancingTo: string | null;
  createdAt: string;
  /** When the sandbox deleted it (real time); null while it stands. */
  deletedAt: string | null;
}

export const TEST_CLOCKS = 'test_clocks';

export const testClocksProjection = defineProjection<TestClockView>({
  name: TEST_CLOCKS,
  handles: ['TestClockCreated', 'TestClockAdvancing', 'TestClockJobRan', 'TestClockReady', 'TestClockDeleted'],
  indexes: [{ keys: { partnerId: 1, createdAt: 1 } }, { keys: { status: 1 } }],
  documentIds: (event) => [(event.data as { clockId: string }).clockId],
  evolve(view, recorded) {
    const event = recorded as unknown as TestClockEvent;
    const _pos = recorded.position;
    switch (event.type) {
      case 'TestClockCreated': {
        const { clockId, partnerId, name, frozenTime, createdAt } = event.data;
        return { _id: clockId, _pos, partnerId, name, frozenTime, status: 'ready', advancingTo: null, createdAt, deletedAt: null };
      }
      case 'TestClockAdvancing':
        return view && { ...view, _pos, status: 'advancing', advancingTo: event.data.to };
      case 'TestClockJobRan':
        return view && { ...view, _pos, frozenTime: event.data.at > view.frozenTime ? event.data.at : view.frozenTime };
      case 'TestClockReady':
        return view && { ...view, _pos, status: 'ready', advancingTo: null, frozenTime: event.data.frozenTime };
      case 'TestClockDeleted':
        return view && { ...view, _pos, status: 'ready', advancingTo: null, deletedAt: recorded.metadata.occurredAt };
      default:
        return view;
    }
  },
});
