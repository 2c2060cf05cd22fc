/**
 * Shared by the tests of the cloud's deliveries (cancellation.test.ts, lease-faults.test.ts): the declarations, the
 * physical ID CloudFormation invents for a cancelled Create, and the bystander checks (a subscription made in the web
 * UI that must never change).
 */
import { HandlerHarness, SELLER_PIPELINE } from './helpers';

export const SUB_PROPS = {
  ProductId: '3001',
  RemoteIdentityId: '362',
  StorageGroupId: '501',
  ProductParameters: { marketplace_id: 'ATVPDKIKX0DER', report_window: '7' },
  Status: 'active',
  Name: 'Orders',
  OnDelete: 'invalid',
};
export const PIPE_PROPS = SELLER_PIPELINE;
/** The physical ID CloudFormation invents for a resource whose Create it stopped waiting for. */
export const INVENTED = 'HandlerTest-Resource-1A2B3C4D5E6F';

export const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * When the second invocation of a race arrives: while the first one's request is held at the emulator (on the wire,
 * not yet applied), or just after the emulator answered it (applied; the first invocation still finishing).
 */
export type Arrival = 'while its request is on the wire' | 'just after its request was answered';
export const ARRIVALS: readonly Arrival[] = ['while its request is on the wire', 'just after its request was answered'];

/** The bystanders and views of one test file's harness. */
export class Deliveries {
  /** The IDs of subscriptions made outside the stack. */
  readonly outside = new Set<string>();
  constructor(private readonly h: () => HandlerHarness) {}

  /** Subscriptions the handler made (the emulator numbers new ones from 9001) that are still active. */
  activeMade(): any[] {
    return this.h().state().subscriptions.filter((s: any) => s.id >= 9001 && !this.outside.has(String(s.id)) && s.status === 'active');
  }

  subOf(id: string): any {
    return this.h().state().subscriptions.find((s: any) => String(s.id) === String(id));
  }

  /** A product-3001 subscription made in the web UI, and its state before the test. */
  async bystander(): Promise<{ id: string; before: string }> {
    const id = await this.h().subscribe(3001, 362, { marketplace_id: 'ATVPDKIKX0DER', remote_identity_id: '362' });
    this.outside.add(id);
    return { id, before: JSON.stringify(this.subOf(id)) };
  }

  unchanged(b: { id: string; before: string }): void {
    expect(JSON.stringify(this.subOf(b.id))).toBe(b.before);
  }

  /** Holds the next request of `method` to `pathPrefix` at the emulator until `release()` (a `hold` fault). */
  async hold(method: string, pathPrefix: string): Promise<void> {
    await this.h().admin('POST', '/faults', { method, pathPrefix, hold: true, count: 1 });
  }

  /** Resolves when the emulator holds `n` requests (it polls every 5 ms, for 10 s at most). */
  async held(n: number): Promise<void> {
    let now = -1;
    for (let i = 0; i < 2000; i++) {
      now = (await this.h().admin('GET', '/faults/held')).held;
      if (now === n) return;
      await delay(5);
    }
    throw new Error(`the emulator holds ${now} requests, not ${n}`);
  }

  /** Lets every held request go on. */
  async release(): Promise<void> {
    await this.h().admin('POST', '/faults/release', {});
  }

  /** How many requests of `method` to `pathPrefix` the emulator's log shows answered (with their status). */
  async answered(method: string, pathPrefix: string): Promise<number> {
    const log = await this.h().requests();
    return log.filter((r) => r.method === method && r.path.startsWith(pathPrefix) && r.status > 0).length;
  }

  /** Resolves when the emulator has answered more than `before` requests of `method` to `pathPrefix`. */
  async answeredMore(method: string, pathPrefix: string, before: number): Promise<void> {
    for (let i = 0; i < 2000; i++) {
      if (await this.answered(method, pathPrefix) > before) return;
      await delay(5);
    }
    throw new Error(`no new answered ${method} ${pathPrefix} in the emulator's log`);
  }

  /** Resolves when `p` settles or the handler sleeps (an invocation waits for something), whichever comes first. */
  async settledOrWaiting(p: Promise<unknown>): Promise<void> {
    const h = this.h();
    const previous = h.onSleep;
    let slept!: () => void;
    const sleeping = new Promise<void>((r) => { slept = r; });
    h.onSleep = (ms) => {
      slept();
      return previous ? previous(ms) : Promise.resolve();
    };
    try {
      await Promise.race([p.then(() => undefined, () => undefined), sleeping]);
    } finally {
      h.onSleep = previous;
    }
  }

  /**
   * Runs `second` against `first`, whose next request of `method` to `pathPrefix` the emulator holds: `second` arrives
   * while that request is held (released when `second` waits or settles, or only once it settled) or just after the
   * emulator answered it. No
   * wall-clock guess: the emulator says when the request arrived and when it was answered.
   */
  async race<A, B>(
    arrival: Arrival, method: string, pathPrefix: string, first: () => Promise<A>, second: () => Promise<B>,
    releaseWhen: 'the second waits or settles' | 'the second settles' = 'the second waits or settles',
  ): Promise<[PromiseSettledResult<A>, PromiseSettledResult<B>]> {
    const before = await this.answered(method, pathPrefix);
    await this.hold(method, pathPrefix);
    const a = first();
    a.catch(() => undefined);
    await this.held(1);
    let b: Promise<B>;
    if (arrival === 'while its request is on the wire') {
      b = second();
      if (releaseWhen === 'the second settles') await b.catch(() => undefined);
      else await this.settledOrWaiting(b);
      await this.release();
    } else {
      await this.release();
      await this.answeredMore(method, pathPrefix, before);
      b = second();
    }
    return Promise.allSettled([a, b]);
  }

  /** The journal records of the resource that are not finished (a live record, or an unresolved attempt). */
  async liveRecords(): Promise<any[]> {
    return (await this.h().journalRecords()).filter((r) => !['deleted', 'abandoned', 'released'].includes(r.state ?? ''));
  }
}
