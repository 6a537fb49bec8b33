import { TestApi } from '../../support/api-harness';
import { chicago, honolulu } from '../../support/catalogue-fixtures';

describe('GET /api/v1/regions', () => {
  let api: TestApi;
  let apiKey: string;

  beforeAll(async () => {
    api = await TestApi.start();
    apiKey = (await api.createPartner()).apiKey;
    await api.importRegions([honolulu, chicago]);
  });
  afterAll(() => api.close());

  it('lists every region by name', async () => {
    const reply = await api.call('GET', '/api/v1/regions', { apiKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      status: 'success',
      regions: [
        { id: 'chicago', active: true, name: 'Chicago' },
        { id: 'honolulu', active: false, name: 'Honolulu' },
      ],
    });
  });

  it('answers one region', async () => {
    const reply = await api.call('GET', '/api/v1/regions/honolulu', { apiKey });
    expect(reply.body).toEqual({ status: 'success', region: { id: 'honolulu', active: false, name: 'Honolulu' } });
  });

  it('answers 404 find_failed for an unknown region', async () => {
    const reply = await api.call('GET', '/api/v1/regions/atlantis', { apiKey });
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({ status: 'error', error_type: 'find_failed', error_msg: 'region not found' });
  });

  it('shows a region revised by a later import', async () => {
    await api.importRegions([{ ...honolulu, active: true, name: 'Honolulu, Oahu' }]);
    expect((await api.call('GET', '/api/v1/regions/honolulu', { apiKey })).body.region).toEqual({
      id: 'honolulu',
      active: true,
      name: 'Honolulu, Oahu',
    });
  });
});
