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

  /** The journal records of the resource that are not finished (a live record, or an unresolved attempt). */
  async liveRecords(): Promise<any[]> {
    return (await this.h().journalRecords()).filter((r) => !['deleted', 'abandoned', 'released'].includes(r.state ?? ''));
  }
}
