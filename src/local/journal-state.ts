/**
 * The local journal's state file: the tables (definition, tags, resource policy) and items that `startJournalServer`
 * restores at start and saves on flush.
 */
import { readFileSync } from 'node:fs';

/** DynamoDB's wire form of an item (`{ attr: { S: '...' } }`, binary values base64). */
export type WireItem = Record<string, unknown>;

/** A key schema element. */
export interface KeyElement {
  readonly AttributeName: string;
  readonly KeyType: string;
}

/** A saved secondary index. */
export interface SavedIndex {
  readonly IndexName: string;
  readonly KeySchema: KeyElement[];
  readonly Projection: Record<string, unknown>;
}

/** A saved table: what is needed to create it again, and its items. */
export interface SavedTable {
  readonly TableName: string;
  readonly KeySchema: KeyElement[];
  readonly AttributeDefinitions: Array<{ AttributeName: string; AttributeType: string }>;
  readonly BillingMode: 'PAY_PER_REQUEST' | 'PROVISIONED';
  readonly ProvisionedThroughput?: { ReadCapacityUnits: number; WriteCapacityUnits: number };
  readonly GlobalSecondaryIndexes?: SavedIndex[];
  readonly LocalSecondaryIndexes?: SavedIndex[];
  /** Its tags (a declared journal's mark). */
  readonly Tags?: Array<{ Key: string; Value: string }>;
  /** Its resource policy (JSON), which the local server keeps beside dynalite. */
  readonly ResourcePolicy?: string;
  readonly Items: WireItem[];
}

/** The journal state file. */
export interface JournalState {
  readonly version: 1;
  readonly tables: SavedTable[];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads and checks a journal state file; errors name the file. */
export function readJournalState(file: string): JournalState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`the journal state file ${file} cannot be read (${(e as Error).message}); fix it or delete it (the journal records in it are then lost)`);
  }
  const bad = (why: string): Error => new Error(`the journal state file ${file} is not valid: ${why}; fix it or delete it (the journal records in it are then lost)`);
  if (!isObject(parsed)) throw bad('not a JSON object');
  if (parsed.version !== 1) throw bad(`unsupported version ${JSON.stringify(parsed.version)}`);
  if (!Array.isArray(parsed.tables)) throw bad('"tables" is not an array');
  for (const [i, t] of parsed.tables.entries()) {
    if (!isObject(t) || typeof t.TableName !== 'string' || !Array.isArray(t.KeySchema) || !Array.isArray(t.AttributeDefinitions) || !Array.isArray(t.Items)) {
      throw bad(`tables[${i}] lacks TableName, KeySchema, AttributeDefinitions or Items`);
    }
    if (t.Items.some((item) => !isObject(item))) throw bad(`tables[${i}] (${t.TableName}) has an item that is not an object`);
  }
  return parsed as unknown as JournalState;
}

export function indexes(raw: unknown): SavedIndex[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined;
  return raw.filter(isObject).map((i) => ({
    IndexName: String(i.IndexName),
    KeySchema: i.KeySchema as KeyElement[],
    Projection: (i.Projection as Record<string, unknown> | undefined) ?? { ProjectionType: 'ALL' },
  }));
}

export function createTableInput(t: SavedTable): Record<string, unknown> {
  const provisioned = t.BillingMode === 'PROVISIONED';
  const throughput = t.ProvisionedThroughput ?? { ReadCapacityUnits: 1, WriteCapacityUnits: 1 };
  const input: Record<string, unknown> = {
    TableName: t.TableName,
    KeySchema: t.KeySchema,
    AttributeDefinitions: t.AttributeDefinitions,
    BillingMode: t.BillingMode,
  };
  if (provisioned) input.ProvisionedThroughput = throughput;
  if (t.GlobalSecondaryIndexes) {
    input.GlobalSecondaryIndexes = t.GlobalSecondaryIndexes.map((g) => ({ ...g, ...(provisioned ? { ProvisionedThroughput: throughput } : {}) }));
  }
  if (t.LocalSecondaryIndexes) input.LocalSecondaryIndexes = t.LocalSecondaryIndexes;
  return input;
}

