/**
 * Jest's module runtime, with V8's code cache kept across the suites a jest worker runs. Every suite
 * loads the same modules (NestJS, zod, the service's libraries) into a fresh module registry, and V8
 * parsed and compiled each of them anew: about a second and a half of CPU a suite. jest-runtime
 * compiles a module with `vm.compileFunction` in the suite's context; that function is wrapped here
 * (in the jest worker, for calls into a context) so that a source compiled before is handed the code
 * cache V8 produced for it. The modules are still evaluated afresh in each suite's context, so the
 * suites stay as isolated as before; V8 checks a cache against the source and refuses one that does
 * not fit (then the source is compiled as usual).
 */
const vm = require('node:vm');

const compileFunction = vm.compileFunction;
/** By module file: the source last compiled from it and V8's code cache for that source. */
const codeCaches = new Map();

function compileWithCodeCache(code, params, options) {
  if (!options?.parsingContext || !options.filename) return compileFunction(code, params, options);
  const known = codeCaches.get(options.filename);
  const cachedData = known?.code === code ? known.cachedData : undefined;
  const compiled = compileFunction(code, params, cachedData ? { ...options, cachedData } : { ...options, produceCachedData: true });
  if (!cachedData && compiled.cachedData) codeCaches.set(options.filename, { code, cachedData: compiled.cachedData });
  else if (compiled.cachedDataRejected) codeCaches.delete(options.filename);
  return compiled;
}

if (vm.compileFunction === compileFunction && !compileFunction.withCodeCache) {
  compileWithCodeCache.withCodeCache = true;
  vm.compileFunction = compileWithCodeCache;
}

module.exports = require('jest-runtime');
