/**
 * What every kind's drift check (src/kinds/<kind>/runtime/drift.ts, run by src/handler/drift.ts) builds on: the row builder,
 * the reads it may use, and what more than one kind compares. See docs/handler.md ("Drift").
 */
import { DpiClient, Subscription } from '../client';
import { BulkReads } from './drift-reads';
import type { DriftDifference, DriftResource, DriftRow, ShownParameters } from './drift-types';
import { JournalRecord } from './journal';

/** What a checker gets besides the row builder and the journal record. */
export interface CheckContext {
  readonly client: DpiClient;
  readonly reads: BulkReads;
  readonly shown: ShownParameters;
  readonly subscriptionsKey: string;
}


/** Row builder. */
export class Check {
  readonly differences: DriftDifference[] = [];
  readonly notChecked: string[] = [];
  private deleted?: string;
  private note?: string;
  private unchecked?: string;

  constructor(readonly r: DriftResource, readonly key: string) {}

  diff(property: string, declared: unknown, live: unknown): void {
    const d = text(declared);
    const l = text(live);
    if (d !== l) this.differences.push({ property, declared: d, live: l });
  }

  /** Compares when the read shows the field and the declaration has a value; otherwise records it as not checked. */
  compare(property: string, declared: unknown, live: unknown): void {
    if (declared === undefined || declared === null || declared === '') return;
    if (live === undefined) {
      this.notChecked.push(property);
      return;
    }
    this.diff(property, declared, live);
  }

  gone(reason: string): void {
    this.deleted = reason;
  }

  noteThat(note: string): void {
    this.note = note;
  }

  cannotCheck(reason: string): void {
    this.unchecked = reason;
  }

  row(): DriftRow {
    const base = { stack: this.r.stack, logicalId: this.r.logicalId, key: this.key, type: this.r.type, physicalId: this.r.physicalId };
    if (this.deleted !== undefined) return { ...base, status: 'DELETED', differences: [], notChecked: [], reason: this.deleted };
    if (this.unchecked !== undefined) return { ...base, status: 'NOT_CHECKED', differences: [], notChecked: [], reason: this.unchecked };
    const notChecked = [...new Set(this.notChecked)];
    return {
      ...base,
      status: this.differences.length > 0 ? 'MODIFIED' : 'IN_SYNC',
      differences: this.differences,
      notChecked,
      ...(this.note !== undefined ? { reason: this.note } : {}),
    };
  }
}

/** A value as the table shows it (lists joined with commas; absent as `-`). */
function text(v: unknown): string {
  if (v === undefined || v === null || v === '') return '-';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(String).join(',');
  return String(v);
}

export const ENDED = new Set(['invalid', 'cancelled']);

/** The read fields of a subscription that the vendor's reads show (compared when shown). */
export function compareShown(c: Check, s: Subscription, declared: { name?: string; storageGroupId?: number; identity?: string }): void {
  c.compare('name', declared.name, s.name === null ? '' : s.name);
  c.compare('storageGroupId', declared.storageGroupId, s.storage_group === null ? '' : s.storage_group);
  c.compare('remoteIdentityId', declared.identity, s.remote_identity === null ? '' : s.remote_identity);
}

export type Checker = (c: Check, x: CheckContext, rec: JournalRecord<never> | undefined) => Promise<void>;
