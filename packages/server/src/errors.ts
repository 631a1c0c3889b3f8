/**
 * An error a client caused or should know about. The HTTP layer turns it into
 * `status` + `{"error": message}` (api-contract.md); anything else is a 500
 * whose details stay in the log.
 */
export class ApiError extends Error {
  readonly status: number;
  /** Sent as the Retry-After header (seconds), for 429 answers. */
  readonly retryAfterSeconds: number | undefined;
  constructor(status: number, message: string, retryAfterSeconds?: number) {
    super(message);
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 400: say which field is wrong and why. */
export const badRequest = (message: string): ApiError => new ApiError(400, message);
/** 401: no credentials, or ones we do not accept. */
export const unauthorized = (message = 'missing or invalid credentials'): ApiError =>
  new ApiError(401, message);
/** 403: authenticated, but not allowed to do this. */
export const forbidden = (message: string): ApiError => new ApiError(403, message);
/** 404: `what` is the noun, e.g. notFound('incident 7'). */
export const notFound = (what: string): ApiError => new ApiError(404, `${what} not found`);
/** 409: the object's state does not allow this, e.g. "incident is resolved". */
export const conflict = (message: string): ApiError => new ApiError(409, message);
/** 429: too many attempts; retry later. */
export const tooManyRequests = (message: string, retryAfterSeconds?: number): ApiError =>
  new ApiError(429, message, retryAfterSeconds);
