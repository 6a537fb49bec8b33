/** Where links in answers point: this API, and the partner-facing site's deal pages and images. */
export abstract class CatalogLinks {
  /** This API's own address (for `next_page`). */
  abstract readonly apiBaseUrl: string;
  abstract readonly siteBaseUrl: string;
  abstract readonly imageBaseUrl: string;
}
