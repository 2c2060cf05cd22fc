/**
 * The request budget every provider container shares (src/handler/rate-budget.ts) in `dpi local-deploy`: a fleet
 * whose nested stacks deploy at once in isolated containers, against an emulator whose rate limit the fleet's calls
 * exceed several times over. With the budget (the provider's `rateLimitRequests` set to the emulator's limit) the
 * containers together stay within it: no request is refused; without it (`rateLimitRequests: 0`) each container
 * finds the limit on its own by 429s. Both deploy and destroy completely.
 */
import { measureDeploy } from '../../bench/lib/deploy-run';

jest.setTimeout(240_000);

const RATE = { requests: 20, seconds: 1 };

test('a fleet of 30 pipelines over its nested stacks at 20 requests per second: no 429 with the shared budget, 429s without it', async () => {
  const shared = await measureDeploy({ pipelines: 30, rateLimit: RATE, fleet: true, budget: true });
  const alone = await measureDeploy({ pipelines: 30, rateLimit: RATE, fleet: true, budget: false });
  for (const r of [shared, alone]) {
    expect(r.deploy.failures).toEqual([]);
    expect(r.destroy.failures).toEqual([]);
    expect(r.deploy.ok && r.destroy.ok).toBe(true);
    expect(r.left).toBe(0);
    // Far more calls than one window allows: the limit matters.
    expect(r.deploy.calls + r.deploy.exchanges).toBeGreaterThan(3 * RATE.requests);
  }
  expect(shared.deploy.containers).toBeGreaterThan(1);
  expect(shared.deploy.refused + shared.destroy.refused).toBe(0);
  expect(alone.deploy.refused + alone.destroy.refused).toBeGreaterThan(0);
});
