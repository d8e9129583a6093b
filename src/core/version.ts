/** Versions of the product and of its envelope contract. Kept in sync with package.json by a test. */
export const CLI_VERSION = '0.2.0';
export const SCHEMA_VERSION = '1.0.0';
