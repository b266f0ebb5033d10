/**
 * The question `apply` asks on a terminal before it changes anything, as Terraform does: only
 * `yes` goes on. Anything else, an empty line or the end of input declines.
 */
import { createInterface } from 'node:readline/promises';

export async function confirm(
  question: string,
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WriteStream = process.stderr,
): Promise<boolean> {
  const rl = createInterface({ input, output, terminal: input.isTTY === true });
  try {
    const closed = new Promise<string>((resolve) => rl.once('close', () => resolve('')));
    const answer = await Promise.race([rl.question(question), closed]);
    return answer.trim() === 'yes';
  } finally {
    rl.close();
  }
}
