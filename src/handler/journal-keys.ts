/**
 * The journal keys a template states: a leaf of the handler (no imports), used by the drift engine and by the command
 * line's reads of deployed stacks, which must not load the kinds' handlers.
 */

/**
 * The explicit journal keys of a template's `Custom::Dpi*` resources (a literal string `JournalKey` property). A
 * `JournalKey` that is not a literal string cannot be known without the deployment: an error naming the stack and resource.
 */
export function journalKeysOfTemplate(stackName: string, templateBody: string): Map<string, string> {
  let template: { Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }> };
  try {
    template = JSON.parse(templateBody) as typeof template;
  } catch (e) {
    throw new Error(`the template of stack ${stackName} (GetTemplate) is not JSON (${(e as Error).message}); the journal keys of its resources cannot be read`);
  }
  const out = new Map<string, string>();
  for (const [logicalId, r] of Object.entries(template?.Resources ?? {})) {
    if (!r || typeof r.Type !== 'string' || !r.Type.startsWith('Custom::Dpi')) continue;
    const k = r.Properties?.JournalKey;
    if (k === undefined) continue;
    if (typeof k !== 'string' || k === '') {
      throw new Error(`stack ${stackName}: resource ${logicalId} has a JournalKey that is not a literal string (${JSON.stringify(k)}); `
        + 'its journal key cannot be known from the template');
    }
    out.set(logicalId, k);
  }
  return out;
}
