// The bounded completion (osFoundry rule D18): what the relay posts when a command ends.
//
// The relay posts {execution_id, status, result, total_tokens, reported_cost} when
// JSON.stringify of that object is at most 100,000 characters, and otherwise
// {execution_id, status, result_truncated: true}: all or nothing, never a partial
// result. "Characters" are what String.prototype.length counts: UTF-16 code units
// (JSON.stringify leaves non-ASCII unescaped; an emoji counts 2). Errors are cut to
// 2,000 characters. No dependencies, no knowledge of any test kit.

/** The most characters JSON.stringify(completion) may have and still carry its result. */
export const RESULT_LIMIT = 100_000;
/** The most characters an error may have; a longer one is cut. */
export const ERROR_LIMIT = 2_000;
/** The statuses a completion may carry. */
export const TERMINAL_STATUSES = Object.freeze(['completed', 'failed', 'cancelled']);

/**
 * `error` cut to at most `limit` UTF-16 code units, like `error.slice(0, limit)`, except
 * that a surrogate pair (an emoji) straddling the cut is dropped whole: the cut text is
 * then `limit - 1` units long. Returns `error` itself when it fits.
 */
export function cutError(error, limit = ERROR_LIMIT) {
  const text = String(error);
  if (text.length <= limit) return text;
  const last = text.charCodeAt(limit - 1);
  const splitsPair = last >= 0xd800 && last <= 0xdbff;
  return text.slice(0, splitsPair ? limit - 1 : limit);
}

/**
 * The completion body for a command (D18).
 *
 * `result` is the Graph's result (posted as `null` when absent); `totalTokens` and
 * `reportedCost` are left out when `undefined` or `null`; `error` is cut with
 * cutError and comes last, only when given. When JSON.stringify of the whole object
 * is over RESULT_LIMIT, the result and the figures are dropped and
 * `result_truncated: true` takes their place (the cut error is kept).
 *
 * Throws a TypeError naming the field when `executionId` is not a non-empty string,
 * `status` is not terminal, or `result` cannot be written as JSON (a cycle, a BigInt).
 */
export function boundedCompletion({
  executionId,
  status,
  result = null,
  totalTokens,
  reportedCost,
  error,
}) {
  if (typeof executionId !== 'string' || executionId === '') {
    throw new TypeError(`executionId must be a non-empty string, got ${String(executionId)}`);
  }
  if (!TERMINAL_STATUSES.includes(status)) {
    throw new TypeError(`status must be one of ${TERMINAL_STATUSES.join(', ')}, got ${String(status)}`);
  }
  const full = { execution_id: executionId, status, result: result === undefined ? null : result };
  if (totalTokens !== undefined && totalTokens !== null) full.total_tokens = totalTokens;
  if (reportedCost !== undefined && reportedCost !== null) full.reported_cost = reportedCost;
  const cut = error === undefined || error === null ? undefined : cutError(error);
  if (cut !== undefined) full.error = cut;
  let length;
  try {
    length = JSON.stringify(full).length;
  } catch (err) {
    throw new TypeError(`the result cannot be written as JSON: ${err.message}`);
  }
  if (length <= RESULT_LIMIT) return full;
  const truncated = { execution_id: executionId, status, result_truncated: true };
  if (cut !== undefined) truncated.error = cut;
  return truncated;
}
