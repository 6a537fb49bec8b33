import { DomainError } from '@deals/kernel';

/** Runs an operator's command; the domain's refusal (not found, not allowed) is told on stderr with exit code 1. */
export async function toldIfRefused(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  }
}
