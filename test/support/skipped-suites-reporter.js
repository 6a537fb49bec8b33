/**
 * A jest reporter that lists, beside jest's summary, the suites the run skipped and why. Suites
 * that need a server this machine may not have (EventStoreDB, MongoDB, Redis) are
 * `describe.skip`ped with the reason in their title; jest's own summary counts them
 * ("2 skipped") without naming them.
 *
 * Silent when a test name filter (-t) is given: jest then skips every test it does not match,
 * for no reason worth listing.
 */
const { relative } = require('node:path');

class SkippedSuitesReporter {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
  }

  onRunComplete(_contexts, results) {
    if (this.globalConfig.testNamePattern) return;
    const lines = [];
    for (const file of results.testResults) {
      // The outermost title of each skipped test: the skipped describe, which carries the reason.
      const titles = new Set(
        file.testResults.filter((test) => test.status === 'pending').map((test) => test.ancestorTitles[0] ?? test.title),
      );
      if (titles.size === 0) continue;
      lines.push(`  ${relative(this.globalConfig.rootDir, file.testFilePath)}`);
      for (const title of titles) lines.push(`    ${title}`);
    }
    if (lines.length === 0) return;
    process.stderr.write(`\nSkipped suites, and why:\n${lines.join('\n')}\n`);
  }
}

module.exports = SkippedSuitesReporter;
