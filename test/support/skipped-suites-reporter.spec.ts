// The reporter is plain JavaScript: jest loads it before any transform.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const SkippedSuitesReporter = require('./skipped-suites-reporter');

const ROOT = '/repo';

function file(path: string, tests: { ancestorTitles: string[]; title: string; status: string }[]) {
  return { testFilePath: `${ROOT}/${path}`, testResults: tests };
}

function report(testNamePattern: string | undefined, files: ReturnType<typeof file>[]): string {
  const written: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    new SkippedSuitesReporter({ rootDir: ROOT, testNamePattern }).onRunComplete(new Set(), { testResults: files });
  } finally {
    spy.mockRestore();
  }
  return written.join('');
}

describe('the skipped-suites reporter', () => {
  const skippedSuite = file('test/contracts/x.int-spec.ts', [
    { ancestorTitles: ['X contract — skipped: X_URL is not set'], title: 'needs a server', status: 'pending' },
  ]);
  const passed = file('test/contracts/y.int-spec.ts', [{ ancestorTitles: ['Y contract'], title: 'works', status: 'passed' }]);

  it("names each skipped suite's file and the title that gives the reason", () => {
    expect(report(undefined, [passed, skippedSuite])).toBe(
      '\nSkipped suites, and why:\n  test/contracts/x.int-spec.ts\n    X contract — skipped: X_URL is not set\n',
    );
  });

  it('writes nothing when nothing was skipped, or when a -t filter skipped tests on purpose', () => {
    expect(report(undefined, [passed])).toBe('');
    expect(report('works', [passed, skippedSuite])).toBe('');
  });
});
