/** Where the partner-facing site serves deal pages and images (configuration, not this API). */
export abstract class CatalogLinks {
  abstract readonly siteBaseUrl: string;
  abstract readonly imageBaseUrl: string;
}
