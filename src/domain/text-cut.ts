/**
 * Cutting text to a number of UTF-16 code units without splitting a surrogate pair: a cut between
 * the two halves of an astral character (an emoji) leaves a lone high surrogate, which UTF-8 cannot
 * hold (stores write it as U+FFFD, and the API refuses it on input: contract/well-formed-text.ts).
 */

/** `text` cut to at most `max` code units; one fewer when the last kept one would be a lone high surrogate. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
