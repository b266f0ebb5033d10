import { join } from 'node:path';
import { readJsonFile, writeJsonFileAtomic } from '../state/atomic-file.ts';
import type { LedgerData, LedgerStore } from './ledger.ts';

/** One-shot mode: the ledger lives in `<state.dir>/<tenant>/ledger.json`. */
export class FileLedgerStore implements LedgerStore {
  readonly path: string;
  readonly describe: string;

  constructor(stateDir: string, tenant: string) {
    this.path = join(stateDir, tenant, 'ledger.json');
    this.describe = `file:${this.path}`;
  }

  load(): Promise<LedgerData | undefined> {
    return readJsonFile<LedgerData>(this.path);
  }

  save(data: LedgerData): Promise<void> {
    return writeJsonFileAtomic(this.path, data);
  }
}
