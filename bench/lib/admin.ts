/** Calls of the emulator's admin API (`/_emulator/...`) used by the benchmarks. Loopback only. */

/** One entry of `GET /_emulator/requests`. */
export interface LoggedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  status: number;
  time: number;
}

/** A fault of `POST /_emulator/faults`. */
export interface FaultSpec {
  method?: string;
  pathPrefix: string;
  status: number;
  count?: number;
  retryAfter?: number;
}

/** A TX report of `POST /_emulator/tx`. */
export interface TxReport {
  id: string;
  sender: 'scheduler' | 'supervisor' | 'ftpsync' | 'zeroadmin';
  status: string;
  timestamp?: number;
  subscription_id?: number;
  payload_name?: string;
  job_id?: string;
  [key: string]: unknown;
}

/** Thin client of the admin API of one running emulator. */
export class EmulatorAdmin {
  constructor(private readonly url: string) {}

  /** Empties the request log (`DELETE /_emulator/requests`). */
  public async clearLog(): Promise<void> {
    await this.call('DELETE', '/requests');
  }

  /** The request log (admin calls are not in it). */
  public async log(): Promise<LoggedRequest[]> {
    return await this.call('GET', '/requests') as LoggedRequest[];
  }

  /** Adds faults; each answers the next `count` matching requests. */
  public async addFault(fault: FaultSpec | FaultSpec[]): Promise<void> {
    await this.call('POST', '/faults', fault);
  }

  /** Removes every pending fault. */
  public async clearFaults(): Promise<void> {
    await this.call('DELETE', '/faults');
  }

  /** Ingests one TX report through the merge rules. */
  public async ingestTx(report: TxReport | TxReport[]): Promise<void> {
    await this.call('POST', '/tx', report);
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { 'content-type': 'application/json' };
    }
    const res = await fetch(`${this.url}/_emulator${path}`, init);
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} /_emulator${path} answered ${res.status}: ${text.slice(0, 200)}`);
    return text === '' ? undefined : JSON.parse(text);
  }
}

/** Number of logged requests matching a method and an exact path. */
export function countRequests(log: readonly LoggedRequest[], method: string, path: string, status?: number): number {
  return log.filter((r) => r.method === method && r.path === path && (status === undefined || r.status === status)).length;
}
