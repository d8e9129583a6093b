/**
 * The part of citeproc-js (npm `citeproc` 2.4.63, CommonJS, no types of its own) that
 * engine.ts and locales.ts use: the engine, its system hooks and the locale tables.
 * Shapes as citeproc-js-docs and the package's source describe them.
 */
declare module 'citeproc' {
  /** What the engine asks its host for; both hooks are synchronous. */
  export interface CiteprocSys {
    /** The CSL-JSON item of an id (called once per id and update). */
    retrieveItem(id: string): unknown;
    /** A locale's XML (or its JSON form), or false when there is none (en-US must be served). */
    retrieveLocale(tag: string): string | CiteprocXmlJson | false;
  }

  /** citeproc-js' JSON form of an XML element (CSL.parseXml): text children are strings. */
  export interface CiteprocXmlJson {
    name: string;
    attrs: Record<string, string>;
    children: Array<CiteprocXmlJson | string>;
  }

  export interface CiteprocCitationItem {
    id: string;
    locator?: string;
    label?: string;
    prefix?: string;
    suffix?: string;
    'suppress-author'?: boolean;
    'author-only'?: boolean;
  }

  export interface CiteprocCitation {
    citationID: string;
    citationItems: CiteprocCitationItem[];
    properties: { noteIndex: number };
  }

  export interface CiteprocBibliographyMeta {
    maxoffset: number;
    entryspacing: number;
    linespacing: number;
    hangingindent?: number | boolean;
    'second-field-align'?: false | 'flush' | 'margin';
    bibstart: string;
    bibend: string;
    entry_ids: string[][];
    bibliography_errors: unknown[];
  }

  export interface CiteprocEngine {
    opt: {
      lang: string;
      'default-locale': string[];
      xclass: string;
      development_extensions: Record<string, unknown>;
    };
    setOutputFormat(format: 'html' | 'text' | 'rtf' | 'asciidoc' | 'fo' | 'latex'): void;
    updateItems(ids: string[]): string[];
    updateUncitedItems(ids: string[]): void;
    restoreProcessorState(citations?: CiteprocCitation[]): unknown;
    makeBibliography(): false | [CiteprocBibliographyMeta, string[]];
    processCitationCluster(
      citation: CiteprocCitation,
      pre: Array<[string, number]>,
      post: Array<[string, number]>,
    ): [{ bibchange: boolean; citation_errors: unknown[] }, Array<[number, string, string]>];
  }

  export interface CiteprocLocaleSpec {
    /** The dialect terms come from first (`de-DE` for `de-AT`). */
    base: string;
    /** The dialect asked for, its primary dialect for a bare language (`de` → `de-DE`). */
    best: string;
    bare: string;
    generic?: boolean;
  }

  /** The part of CSL.XmlJSON that indexMacroLookups (engine.ts) wraps. */
  export interface CiteprocXmlJsonReader {
    dataObj: CiteprocXmlJson;
    getNodesByName(
      node: CiteprocXmlJson,
      name: string,
      nameAttr?: string,
      found?: CiteprocXmlJson[],
    ): CiteprocXmlJson[];
  }

  interface CSLNamespace {
    /** The style as XML text, or as its JSON form (CSL.parseXml's), which the engine changes. */
    Engine: new (
      sys: CiteprocSys,
      style: string | CiteprocXmlJson,
      lang?: string,
      forceLang?: boolean,
    ) => CiteprocEngine;
    /** Parses a style's or locale's XML into the JSON form the engine takes. */
    parseXml(xml: string): CiteprocXmlJson;
    /** The JSON form's reader (the engine's `cslXml`). */
    XmlJSON: { prototype: CiteprocXmlJsonReader };
    /** Language → its primary dialect, with `_` (`de: "de_DE"`), as the engine resolves them. */
    LANG_BASES: Record<string, string>;
    /** The locales citeproc-js knows by name (`"de-DE": "German (DE)"`). */
    LANGS: Record<string, string>;
    localeResolve(tag: string, fallback?: string): CiteprocLocaleSpec;
    /** Where the engine's warnings go (by default console.log, which would spoil stdout). */
    debug: (message: string) => void;
  }

  const CSL: CSLNamespace;
  export default CSL;
}
