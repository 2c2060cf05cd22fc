/**
 * What the local journal server keeps beside dynalite for declared journals (`LifecycleJournal`): each table's
 * resource policy (dynalite has none) answered through DynamoDB's `GetResourcePolicy`, `PutResourcePolicy` and
 * `DeleteResourcePolicy`, and the journal tables a deployed template declares, made as CloudFormation would make them.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** A declared journal table of a template, resolved. */
export interface DeclaredTable {
  readonly tableName: string;
  readonly tags: ReadonlyArray<{ readonly Key: string; readonly Value: string }>;
  /** The resource policy document (JSON), when the template gives one. */
  readonly policy?: string;
}

/** The tag that marks a declared journal's table (kept in step with src/contract.ts; a test checks both). */
export const DECLARED_JOURNAL_TAG = 'dpi:lifecycle-journal';

const POLICY_OPS = new Set(['GetResourcePolicy', 'PutResourcePolicy', 'DeleteResourcePolicy']);

/** The table name of a DynamoDB table ARN (`arn:aws:dynamodb:<region>:<account>:table/<name>`). */
function tableOfArn(arn: unknown): string | undefined {
  return typeof arn === 'string' ? /:table\/([^/]+)$/.exec(arn)?.[1] : undefined;
}

/**
 * Answers the resource-policy operations from `policies` (table name to policy JSON) before dynalite sees them; every
 * other request goes on to dynalite's handlers. `tableExists` tells a missing table (ResourceNotFoundException).
 */
export function servePolicies(server: Server, policies: Map<string, string>, tableExists: (name: string) => Promise<boolean>): void {
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const op = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    if (!POLICY_OPS.has(op)) {
      for (const h of handlers) h.call(server, req, res);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const answer = (status: number, body: Record<string, unknown>): void => {
          res.statusCode = status;
          res.setHeader('content-type', 'application/x-amz-json-1.0');
          res.end(JSON.stringify(body));
        };
        const error = (type: string, message: string): void => answer(400, { __type: `com.amazonaws.dynamodb.v20120810#${type}`, message });
        let body: Record<string, unknown>;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
        } catch {
          return error('SerializationException', 'the request body is not JSON');
        }
        const table = tableOfArn(body.ResourceArn);
        if (!table || !(await tableExists(table))) return error('ResourceNotFoundException', `Requested resource not found: ${String(body.ResourceArn)}`);
        if (op === 'PutResourcePolicy') {
          if (typeof body.Policy !== 'string') return error('ValidationException', 'Policy is required');
          policies.set(table, body.Policy);
          return answer(200, { RevisionId: String(policies.size) });
        }
        const policy = policies.get(table);
        if (policy === undefined) return error('PolicyNotFoundException', `Resource-based policy not found for the provided ResourceArn: ${String(body.ResourceArn)}`);
        if (op === 'DeleteResourcePolicy') {
          policies.delete(table);
          return answer(200, { RevisionId: '0' });
        }
        return answer(200, { Policy: policy, RevisionId: '1' });
      })().catch((e: unknown) => {
        res.statusCode = 500;
        res.end(JSON.stringify({ __type: 'InternalServerError', message: (e as Error).message }));
      });
    });
  });
}

/**
 * The declared journal tables of a template (`AWS::DynamoDB::Table` resources tagged `dpi:lifecycle-journal`), with
 * `resolve` turning their properties' intrinsics into values. A table without a literal name is skipped (a declared
 * journal is named).
 */
export function declaredTables(resources: Record<string, { Type?: string; Properties?: Record<string, unknown> }>,
  resolve: (value: unknown, id: string) => unknown): DeclaredTable[] {
  const out: DeclaredTable[] = [];
  for (const [id, r] of Object.entries(resources)) {
    if (r.Type !== 'AWS::DynamoDB::Table') continue;
    const props = (resolve(r.Properties ?? {}, id) ?? {}) as Record<string, unknown>;
    const tags = (Array.isArray(props.Tags) ? props.Tags : []) as Array<{ Key: string; Value: string }>;
    // A journal's table as LifecycleJournal makes it: tagged v1, named, keys pk and sk.
    const keys = (Array.isArray(props.KeySchema) ? props.KeySchema : []) as Array<{ AttributeName?: string; KeyType?: string }>;
    const journalKeys = keys.length === 2 && keys.some((k) => k.AttributeName === 'pk' && k.KeyType === 'HASH') && keys.some((k) => k.AttributeName === 'sk' && k.KeyType === 'RANGE');
    if (!tags.some((t) => t.Key === DECLARED_JOURNAL_TAG && t.Value === 'v1') || typeof props.TableName !== 'string' || !journalKeys) continue;
    const policy = (props.ResourcePolicy as { PolicyDocument?: unknown } | undefined)?.PolicyDocument;
    out.push({
      tableName: props.TableName,
      tags: tags.map((t) => ({ Key: String(t.Key), Value: String(t.Value) })),
      ...(policy !== undefined ? { policy: typeof policy === 'string' ? policy : JSON.stringify(policy) } : {}),
    });
  }
  return out;
}
