// ESLint (flat config): typescript-eslint's recommended rules, Prettier owning the layout, and the
// house rule that a lib is imported only through its @deals/* alias.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

// Entries besides a lib's index, free of HTTP and Nest, for the CLI's quick commands (see apps/cli/src/main.ts)
// and for the certificate's maker, which the tests start several of at once.
const LIGHT_ENTRIES = ['projections', 'service-config', 'embedded-status', 'shared-folder'];
const LIBS = [
  'kernel',
  'adapters',
  'wire',
  'catalog',
  'accounts',
  'purchasing',
  'engagement',
  'settlement',
  'bulk-jobs',
  'messaging',
  'partner-site',
  'event-feed',
  'runtime',
  'testing',
];

// The errors a caller is answered with (libs/kernel/src/errors.ts and their subclasses).
const ANSWERED_ERRORS =
  'AlreadyCharging|AttemptAlreadyRecorded|BulkJobCompletedAlready|CannotFulfil|CannotFulfilReseller|CardLinkNotOpened|CouponNotRefundable|' +
  'Declined|Forbidden|IdempotencyKeyInUse|KeyedPurchaseStartedBefore|NotFound|OverPerUserLimit|PaymentFailed|PaymentOutcomeUnknown|' +
  'PersonalDataErased|ResaleClaimSuperseded|RetryLater|ServiceUnavailable|TooManyBulkJobs|Unauthorized|UpdateFailed|ValidationFailed|' +
  'WriteContended|WrittenNotShown|WrongCredentials';
// What a refusal's text may put in: a constant of ours (`MAX_ITEMS`, `LIMITS.max`, `WORDS.join(', ')`), or
// how many unknown words a field holds; anything else may be what the caller sent.
const OURS =
  'Identifier[name=/^[A-Z][A-Z0-9_]*$/], MemberExpression[object.name=/^[A-Z][A-Z0-9_]*$/], ' +
  "CallExpression[callee.object.name=/^[A-Z][A-Z0-9_]*$/], CallExpression[callee.name='unknownWords']";
const ECHO_MESSAGE =
  'A refusal names the field and the rule, never the value given (an id, an email, a number the caller sent): write the ' +
  "message without it. Where the value is ours (a limit, the service's own id), say so in an eslint-disable-next-line comment.";

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.bench-builds/**', 'coverage/**', 'data/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { parserOptions: { sourceType: 'module' } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(libs/)?(${LIBS.join('|')})/src(/|$)`,
              message: 'Import another lib through its @deals/* alias.',
            },
          ],
        },
      ],
    },
  },
  {
    // Production code uses a lib's public face (its index); tests and benches may reach inside.
    files: ['apps/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts', 'libs/testing/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: `^(\\.\\./)+(libs/)?(${LIBS.join('|')})/src(/|$)`, message: 'Import another lib through its @deals/* alias.' },
            {
              regex: `^@deals/(${LIBS.join('|')})/(?!(${LIGHT_ENTRIES.join('|')})$)`,
              message: 'Import a lib through its index (@deals/<lib>), not its files.',
            },
          ],
        },
      ],
    },
  },
  {
    // Refusals echo nothing: no answered error, validation issue or zod message built from a value
    // that is not a constant of ours.
    files: ['apps/api/**/*.ts', 'libs/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.int-spec.ts', 'libs/testing/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: `NewExpression[callee.name=/^(${ANSWERED_ERRORS})$/] > TemplateLiteral > .expressions:not(${OURS})`,
          message: ECHO_MESSAGE,
        },
        {
          selector: `:matches(Property[key.name=/^(message|error)$/], CallExpression[callee.name=/^(invalid|fail|used|refundRefused)$/]) > TemplateLiteral > .expressions:not(${OURS})`,
          message: ECHO_MESSAGE,
        },
      ],
    },
  },
  {
    // A worker thread's module is loaded by path, where only relative modules resolve: it reaches
    // another lib's files (pure ones, importing nothing but Node and relative modules) directly.
    files: ['libs/**/*.worker.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // Replies in tests and benches are whatever the service sent: typed loosely on purpose.
    files: ['test/**/*.ts', 'bench/**/*.ts', '**/*.spec.ts', '**/*.int-spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The partners' client, and the test written as a partner would use it, are typed throughout.
    files: ['clients/**/*.ts', 'test/e2e/client/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
);
