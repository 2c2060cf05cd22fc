/**
 * The resource leases (`lease#<resource key>` items, src/handler/journal-lease.ts) still held by invocations of an
 * earlier run expire now: those invocations ended with that run's process, as a Lambda container's end frees its
 * lease in the cloud (the lease expires with its holder's deadline). What they last held stays recorded.
 */
export async function expireLeases(call: (op: string, body: Record<string, unknown>) => Promise<Record<string, unknown>>): Promise<void> {
  const past = new Date(0).toISOString();
  let start: string | undefined;
  const tables: string[] = [];
  do {
    const out = await call('ListTables', start ? { ExclusiveStartTableName: start } : {});
    tables.push(...((out.TableNames as string[] | undefined) ?? []));
    start = out.LastEvaluatedTableName as string | undefined;
  } while (start);
  for (const table of tables) {
    let from: unknown;
    do {
      const page = await call('Scan', {
        TableName: table,
        FilterExpression: 'begins_with(pk, :p) AND attribute_exists(holder)',
        ExpressionAttributeValues: { ':p': { S: 'lease#' } },
        ...(from !== undefined ? { ExclusiveStartKey: from } : {}),
      });
      for (const item of (page.Items as Array<Record<string, unknown>> | undefined) ?? []) {
        await call('UpdateItem', {
          TableName: table,
          Key: { pk: item.pk, sk: item.sk },
          UpdateExpression: 'SET expiresAt = :past',
          ExpressionAttributeValues: { ':past': { S: past } },
        });
      }
      from = page.LastEvaluatedKey;
    } while (from !== undefined);
  }
}
