/** What the reader and the parse thread say to each other (one export body at a time). */
import type { Frame } from './frame-parser.ts';

export type ToParser = { t: 'start'; idColumn: string | undefined } | { t: 'chunk'; bytes: ArrayBuffer } | { t: 'end' };

export type FromParser = { t: 'frame'; frame: Frame; done: boolean } | { t: 'error'; code: string; message: string };
