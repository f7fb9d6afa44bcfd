/**
 * The checks of the SDK's connection options that are not plain types: the base URLs (one or a
 * failover list) and the API key, each refused with a ClientOptionError naming the option.
 */
import { ClientOptionError } from './errors';

/**
 * An API key goes in the `Authorization` header, whose value may hold only visible ASCII, spaces and
 * tabs inside, and no white space at its ends (RFC 9110 §5.5): a key read from a secret file with
 * its trailing newline failed every call with Node's `ERR_INVALID_CHAR`.
 * @throws ClientOptionError naming `apiKey`
 */
export function checkApiKey(apiKey: unknown): void {
  if (apiKey === undefined) return;
  if (typeof apiKey !== 'string') throw new ClientOptionError('apiKey', `must be a string (got ${typeof apiKey})`);
  if (apiKey !== apiKey.trim())
    throw new ClientOptionError('apiKey', 'starts or ends with white space (a trailing newline of the file it was read from?)');
  const bad = /[^\x20-\x7e\t]/.exec(apiKey);
  if (bad)
    throw new ClientOptionError(
      'apiKey',
      `holds a character an HTTP header cannot carry (U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`,
    );
}

/**
 * The base URLs of `url` (one, or a non-empty array of them), without trailing slashes. A path is
 * kept as a prefix of every request's path (a proxy serving the API under `/scheduler`).
 * @throws ClientOptionError naming `url` when it is not, or an element is not, a string naming an
 *   http:// or https:// URL without white space at its ends, a query, a fragment or credentials
 *   (`user:password@`: fetch refuses every request to such a URL); when the array is empty; or
 *   when it names one member twice (after URL normalisation: `HTTP://A:80/` is
 *   `http://a`), which would spend failover attempts on one member
 */
export function baseUrlsOf(url: unknown): string[] {
  if (!Array.isArray(url)) return [baseUrlOf(url).base];
  if (url.length === 0) throw new ClientOptionError('url', 'must name at least one http:// or https:// URL (got an empty list)');
  const seen = new Map<string, string>();
  return url.map((u: unknown) => {
    const { base, key } = baseUrlOf(u);
    const before = seen.get(key);
    if (before !== undefined)
      throw new ClientOptionError('url', `lists one member twice: ${JSON.stringify(before)} and ${JSON.stringify(u)}`);
    seen.set(key, u as string);
    return base;
  });
}

/**
 * The base URL without trailing slashes, and its normalised form (`key`: how two spellings of one
 * member are told to be the same).
 * @throws ClientOptionError naming `url` as {@link baseUrlsOf} says
 */
function baseUrlOf(url: unknown): { base: string; key: string } {
  if (typeof url !== 'string')
    throw new ClientOptionError(
      'url',
      `must be a string naming an http:// or https:// URL (got ${url instanceof URL ? 'a URL object: pass its .href' : url === null ? 'null' : url === undefined ? 'nothing' : typeof url})`,
    );
  if (url.trim() !== url) throw new ClientOptionError('url', `starts or ends with white space (${JSON.stringify(url)})`);
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // not a URL: refused below
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw new ClientOptionError('url', `must be an http:// or https:// URL, e.g. http://127.0.0.1:8080 (got ${JSON.stringify(url)})`);
  if (parsed.search !== '' || parsed.hash !== '' || url.includes('?') || url.includes('#'))
    throw new ClientOptionError('url', `is a base URL: no query or fragment (got ${JSON.stringify(url)})`);
  if (parsed.username !== '' || parsed.password !== '')
    throw new ClientOptionError('url', `carries credentials (user:password@), which fetch refuses to send: pass the API key as apiKey`);
  return { base: url.replace(/\/+$/, ''), key: parsed.href.replace(/\/+$/, '') };
}
