// A compiler plugin for `nest build` (named in nest-cli.json as `../scripts/nest-paths-plugin`: the
// CLI resolves plugin names from ./node_modules): rewrites the @deals/* aliases of
// `import('…')` and `require('…')` calls into relative paths. The Nest CLI rewrites the aliases of
// import and export declarations only, so without it the CLI's lazily loaded entry
// (`await import('@deals/runtime/embedded-status')` in apps/cli/src/main.ts) would not be found at
// run time. `npm run build` does the same for every form with tsc-alias.
const { dirname, posix, relative, resolve } = require('node:path');

/** The path `specifier` maps to under the program's `paths` (absolute, without extension), or null. */
function mapped(specifier, options) {
  const base = options.baseUrl ?? options.pathsBasePath ?? process.cwd();
  for (const [pattern, targets] of Object.entries(options.paths ?? {})) {
    const [prefix, suffix] = pattern.includes('*') ? pattern.split('*') : [pattern, null];
    if (suffix === null ? specifier !== prefix : !specifier.startsWith(prefix) || !specifier.endsWith(suffix)) continue;
    const rest = suffix === null ? '' : specifier.slice(prefix.length, specifier.length - suffix.length);
    return resolve(base, targets[0].replace('*', rest));
  }
  return null;
}

exports.before = (_pluginOptions, program) => {
  const ts = require('typescript');
  const options = program.getCompilerOptions();
  return (context) => (sourceFile) => {
    const visit = (node) => {
      const isLoad =
        ts.isCallExpression(node) &&
        node.arguments.length === 1 &&
        ts.isStringLiteral(node.arguments[0]) &&
        (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'));
      const target = isLoad ? mapped(node.arguments[0].text, options) : null;
      if (target === null) return ts.visitEachChild(node, visit, context);
      const path = relative(dirname(sourceFile.fileName), target).split('\\').join(posix.sep);
      const specifier = path.startsWith('.') ? path : `./${path}`;
      return context.factory.updateCallExpression(node, node.expression, node.typeArguments, [
        context.factory.createStringLiteral(specifier),
      ]);
    };
    return ts.visitNode(sourceFile, visit);
  };
};
