/**
 * The request budget every provider container shares (src/handler/rate-budget.ts) in `dpi local-deploy`: a fleet
 * whose nested stacks deploy at once in isolated containers, against an emulator whose rate limit the fleet's calls
 * exceed several times over. With the budget (the provider's `rateLimitRequests` set to the emulator's limit) the
 * containers together stay within it: no request is refused; without it (`rateLimitRequests: 0`) each container
 * finds the limit on its own by 429s. Both deploy and destroy completely.
 */
import { windowFloor } from '../../bench/lib/cloud-limit';
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

test('the window floor the benchmark compares with: what the rolling window allows, given what it held at the start', () => {
  const limit = { requests: 4, seconds: 10 };
  // An empty window: the first 4 at once, the next when the first leaves.
  expect(windowFloor([], 100, 4, limit)).toBe(0);
  expect(windowFloor([], 100, 5, limit)).toBe(10);
  // A window filled evenly (one request every 2.5 s) lets one more through as each leaves: the limit's pace.
  expect(windowFloor([92.5, 95, 97.5, 100], 100, 1, limit)).toBe(2.5);
  expect(windowFloor([92.5, 95, 97.5, 100], 100, 4, limit)).toBe(10);
  // The same 4 in one burst at the end: nothing until they leave together, then the 4 at once.
  expect(windowFloor([100, 100, 100, 100], 100, 1, limit)).toBe(10);
  expect(windowFloor([100, 100, 100, 100], 100, 5, limit)).toBe(20);
  // Requests older than the window do not count.
  expect(windowFloor([80, 85, 89, 90], 100, 4, limit)).toBe(0);
});
